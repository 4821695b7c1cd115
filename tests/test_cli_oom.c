/* The CLI when its own allocations fail. The CLI allocates with malloc and calloc, not through an
 * allocator the library lets tests replace, so this binary wraps both at link time (--wrap, see
 * CMakeLists.txt): armed, the wrappers refuse a chosen calloc and hand out malloc blocks that
 * hold a path, as a recycled block may - a command that reads memory it never wrote then acts on
 * that path. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blend_space_json.h"
#include "commands.h"
#include "support.h"

void *__real_malloc(size_t size);
void *__real_calloc(size_t count, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t count, size_t size);

static struct {
    int armed;
    int callocs;      /* calloc calls since armed */
    int fail_calloc;  /* which of them returns NULL (1: the first) */
    size_t fail_malloc_size; /* a malloc of this size returns NULL (0: none) */
    const char *stale; /* what each malloc block holds */
} inject;

void *__wrap_malloc(size_t size) {
    if (inject.armed && inject.fail_malloc_size && size == inject.fail_malloc_size) return NULL;
    void *p = __real_malloc(size);
    if (p && inject.armed && strlen(inject.stale) < size) strcpy((char *)p, inject.stale);
    return p;
}

void *__wrap_calloc(size_t count, size_t size) {
    if (inject.armed && ++inject.callocs == inject.fail_calloc) return NULL;
    return __real_calloc(count, size);
}

static int is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* synth's output names and its staging directory are allocated before anything is written: when
 * one of them fails it reports running out of memory and removes nothing - in particular not an
 * empty directory whose path the staging name's block happened to hold. */
static void test_synth_out_of_memory_removes_nothing(void **state) {
    (void)state;
    for (int fail = 1; fail <= 2; fail++) {
        char out[1024], victim[1024], what[32];
        snprintf(out, sizeof out, "%s/synth-oom-%d", pm_test_tmp_dir(), fail);
        snprintf(victim, sizeof victim, "%s/victim-%d", pm_test_tmp_dir(), fail);
        assert_int_equal(mkdir(out, 0755), 0);
        assert_int_equal(mkdir(victim, 0755), 0);
        char cmd[] = "synth", clips[] = "--clips", two[] = "2";
        char *argv[] = {cmd, out, clips, two, NULL};
        inject.callocs = 0;
        inject.fail_calloc = fail;
        inject.stale = victim;
        inject.armed = 1;
        int rc = pm_cmd_synth(4, argv);
        inject.armed = 0;
        snprintf(what, sizeof what, "calloc %d failing", fail);
        if (rc != 1) fail_msg("%s: synth returned %d, not 1", what, rc);
        if (!is_dir(victim)) fail_msg("%s: synth removed %s", what, victim);
        assert_true(is_dir(out)); /* there before the run: not synth's to remove */
        assert_int_equal(rmdir(victim), 0);
        assert_int_equal(rmdir(out), 0); /* and nothing was left in it */
    }
}

/* A blend space whose folder name cannot be copied (a malloc of the path's length + 1 fails) says
 * it ran out of memory: the error the command prints is set, not whatever the caller's held. */
static void test_blend_space_json_out_of_memory_says_so(void **state) {
    (void)state;
    char path[600];
    int n = snprintf(path, sizeof path, "%s/oom-space-%0200d.json", pm_test_tmp_dir(), 7);
    assert_true(n > 0 && (size_t)n < sizeof path);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"name\": \"s\", \"axes\": [{\"name\": \"x\", \"min\": 0, \"max\": 1}], \"samples\": []}\n", f);
    assert_int_equal(fclose(f), 0);
    pm_bvh_def bvh = pm_default_bvh_def();
    pm_blend_space_file space;
    pm_error err;
    memset(&err, 'U', sizeof err);
    err.message[sizeof err.message - 1] = '\0';
    inject.stale = "";
    inject.fail_malloc_size = strlen(path) + 1;
    inject.armed = 1;
    pm_result r = pm_blend_space_load_json(&space, path, &bvh, &err);
    inject.armed = 0;
    inject.fail_malloc_size = 0;
    assert_int_equal(r, PM_ERR_OUT_OF_MEMORY);
    assert_int_equal(err.code, PM_ERR_OUT_OF_MEMORY);
    if (!strstr(err.message, "out of memory") || !strstr(err.message, "oom-space-"))
        fail_msg("error message: '%.80s'", err.message);
    assert_int_equal(unlink(path), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_synth_out_of_memory_removes_nothing),
        cmocka_unit_test(test_blend_space_json_out_of_memory_says_so),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
