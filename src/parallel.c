#include "parallel.h"

#include <pthread.h>
#include <stdatomic.h>

#define PM_MAX_THREADS 64

typedef struct pool {
    pm_task_fn fn;
    void *context;
    int task_count;
    atomic_int next;
    atomic_int finished;
    atomic_int stopped;
} pool;

static void run_worker(pool *p, pm_tasks_done_fn done, void *done_user) {
    while (!atomic_load(&p->stopped)) {
        int t = atomic_fetch_add(&p->next, 1);
        if (t >= p->task_count) return;
        p->fn(p->context, t);
        int n = atomic_fetch_add(&p->finished, 1) + 1;
        if (done && done(done_user, n, p->task_count)) atomic_store(&p->stopped, 1);
    }
}

static void *thread_main(void *arg) {
    run_worker((pool *)arg, NULL, NULL);
    return NULL;
}

int pm_parallel_for_watched(int task_count, int threads, pm_task_fn fn, void *context, pm_tasks_done_fn done,
                            void *done_user) {
    if (task_count <= 0) return 0;
    if (threads > PM_MAX_THREADS) threads = PM_MAX_THREADS;
    if (threads > task_count) threads = task_count;
    pool p;
    p.fn = fn;
    p.context = context;
    p.task_count = task_count;
    atomic_init(&p.next, 0);
    atomic_init(&p.finished, 0);
    atomic_init(&p.stopped, 0);
    pthread_t ids[PM_MAX_THREADS];
    int started = 0;
    for (int i = 1; i < threads; i++) {
        if (pthread_create(&ids[i], NULL, thread_main, &p) != 0) break;
        started = i;
    }
    run_worker(&p, done, done_user);
    for (int i = 1; i <= started; i++) pthread_join(ids[i], NULL);
    return atomic_load(&p.stopped);
}

void pm_parallel_for(int task_count, int threads, pm_task_fn fn, void *context) {
    (void)pm_parallel_for_watched(task_count, threads, fn, context, NULL, NULL);
}
