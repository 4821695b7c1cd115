#include "clip_reader.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>

enum { READ_MAX_THREADS = 64 };

typedef struct read_pool {
    pm_cli_read_slot *slots;
    char *const *files;
    const int *wanted;
    int count;
    const pm_bvh_def *def;
    const atomic_int *stop;
    atomic_int next;
    atomic_int failed;
} read_pool;

typedef struct read_thread_state {
    read_pool *pool;
    atomic_int done;
} read_thread_state;

static void read_files(read_pool *p) {
    for (;;) {
        if (atomic_load(p->stop) || atomic_load(&p->failed)) return;
        int i = atomic_fetch_add(&p->next, 1);
        if (i >= p->count) return;
        if (!p->wanted[i]) continue;
        pm_cli_read_slot *s = &p->slots[i];
        s->result = pm_bvh_read_file(&s->clip, p->files[i], p->def, &s->error);
        s->taken = 1;
        if (s->result != PM_OK) atomic_store(&p->failed, 1);
    }
}

static void *read_thread(void *arg) {
    read_thread_state *t = (read_thread_state *)arg;
    read_files(t->pool);
    atomic_store(&t->done, 1);
    return NULL;
}

void pm_cli_read_clips(pm_cli_read_slot *slots, char *const *files, const int *wanted, int count, const pm_bvh_def *def,
                       int threads, const atomic_int *stop) {
    read_pool p = {.slots = slots, .files = files, .wanted = wanted, .count = count, .def = def, .stop = stop};
    atomic_init(&p.next, 0);
    atomic_init(&p.failed, 0);
    pthread_t ids[READ_MAX_THREADS];
    read_thread_state states[READ_MAX_THREADS];
    int started = 0;
    if (threads > READ_MAX_THREADS) threads = READ_MAX_THREADS;
    if (threads > count) threads = count;
    /* With several threads the caller's only watches them: a signal lands on any one thread and
     * interrupts only the open() or read() that one is blocked in, so a reader waiting on a FIFO
     * (a clip given as <(command)) would never see it and the command would hang after Ctrl-C.
     * Once *stop is set, the watcher sends that signal (whose handler set *stop, and which is not
     * SA_RESTART) to every reader still busy, again until each has returned. */
    for (int t = 0; threads > 1 && t < threads; t++) {
        states[started].pool = &p;
        atomic_init(&states[started].done, 0);
        if (pthread_create(&ids[started], NULL, read_thread, &states[started]) != 0) break;
        started++;
    }
    if (started == 0) read_files(&p);
    for (;;) {
        int busy = 0;
        for (int t = 0; t < started; t++) busy += !atomic_load(&states[t].done);
        if (!busy) break;
        int signo = atomic_load(stop);
        if (signo > 0)
            for (int t = 0; t < started; t++)
                if (!atomic_load(&states[t].done)) pthread_kill(ids[t], signo);
        struct timespec nap = {0, 2000000}; /* 2 ms */
        nanosleep(&nap, NULL);
    }
    for (int t = 0; t < started; t++) pthread_join(ids[t], NULL);
}

void pm_cli_read_slots_free(pm_cli_read_slot *slots, int count) {
    for (int i = 0; slots && i < count; i++)
        if (slots[i].taken && slots[i].result == PM_OK) {
            pm_clip_destroy(&slots[i].clip);
            slots[i].taken = 0;
        }
}
