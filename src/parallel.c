#include "parallel.h"

#include <pthread.h>
#include <stdatomic.h>

#define PM_MAX_THREADS 64

typedef struct pool {
    pm_task_fn fn;
    void *context;
    int task_count;
    atomic_int next;
} pool;

static void run_worker(pool *p) {
    for (;;) {
        int t = atomic_fetch_add(&p->next, 1);
        if (t >= p->task_count) return;
        p->fn(p->context, t);
    }
}

static void *thread_main(void *arg) {
    run_worker((pool *)arg);
    return NULL;
}

void pm_parallel_for(int task_count, int threads, pm_task_fn fn, void *context) {
    if (task_count <= 0) return;
    if (threads > PM_MAX_THREADS) threads = PM_MAX_THREADS;
    if (threads > task_count) threads = task_count;
    if (threads <= 1) {
        for (int t = 0; t < task_count; t++) fn(context, t);
        return;
    }
    pool p;
    p.fn = fn;
    p.context = context;
    p.task_count = task_count;
    atomic_init(&p.next, 0);
    pthread_t ids[PM_MAX_THREADS];
    int started = 0;
    for (int i = 1; i < threads; i++) {
        if (pthread_create(&ids[i], NULL, thread_main, &p) != 0) break;
        started = i;
    }
    run_worker(&p);
    for (int i = 1; i <= started; i++) pthread_join(ids[i], NULL);
}
