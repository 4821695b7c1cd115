/* Offline-builder parallelism: a fork-join loop over numbered tasks. Results must be written
 * per task index and merged in index order by the caller, so they never depend on the thread
 * count or on scheduling. Runtime (per-frame) code never creates threads. */
#ifndef PM_PARALLEL_H
#define PM_PARALLEL_H

typedef void (*pm_task_fn)(void *context, int task);
/* Told how many tasks are done; non-zero stops the loop (tasks not yet started never start). */
typedef int (*pm_tasks_done_fn)(void *user, int done, int task_count);

/* Runs fn(context, t) for t in [0, task_count) on up to `threads` threads (the caller included).
 * Falls back to serial when threads cannot be created. */
void pm_parallel_for(int task_count, int threads, pm_task_fn fn, void *context);
/* pm_parallel_for that calls `done` (when not NULL) on the calling thread after each task that
 * thread runs. Returns 1 when `done` stopped the loop (some tasks may not have run), else 0. */
int pm_parallel_for_watched(int task_count, int threads, pm_task_fn fn, void *context, pm_tasks_done_fn done,
                            void *done_user);

#endif
