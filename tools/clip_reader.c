#include "clip_reader.h"

#include <pthread.h>

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
    read_files((read_pool *)arg);
    return NULL;
}

void pm_cli_read_clips(pm_cli_read_slot *slots, char *const *files, const int *wanted, int count, const pm_bvh_def *def,
                       int threads, const atomic_int *stop) {
    read_pool p = {.slots = slots, .files = files, .wanted = wanted, .count = count, .def = def, .stop = stop};
    atomic_init(&p.next, 0);
    atomic_init(&p.failed, 0);
    pthread_t ids[READ_MAX_THREADS];
    int started = 0;
    if (threads > READ_MAX_THREADS) threads = READ_MAX_THREADS;
    if (threads > count) threads = count;
    for (int t = 1; t < threads; t++) {
        if (pthread_create(&ids[started], NULL, read_thread, &p) != 0) break;
        started++;
    }
    read_files(&p);
    for (int t = 0; t < started; t++) pthread_join(ids[t], NULL);
}

void pm_cli_read_slots_free(pm_cli_read_slot *slots, int from, int count) {
    for (int i = from; i < count; i++)
        if (slots[i].taken && slots[i].result == PM_OK) {
            pm_clip_destroy(&slots[i].clip);
            slots[i].taken = 0;
        }
}
