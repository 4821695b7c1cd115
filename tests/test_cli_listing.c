/* The CLI's directory scan when the system fails it. readdir ends a listing with NULL both at its
 * end and on a failure (EOVERFLOW for an inode number past 32 bits in a 32-bit build without
 * large-file support, EIO), and only errno tells them apart: a scan that took the failure for the
 * end would leave clips out of a database without a word. readdir is wrapped at link time (see
 * CMakeLists.txt; readdir64 is the name it has under _FILE_OFFSET_BITS=64 where that differs). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_file.h"
#include "support.h"

void *__real_readdir(void *dir);
void *__real_readdir64(void *dir);
void *__wrap_readdir(void *dir);
void *__wrap_readdir64(void *dir);

static struct {
    int calls;     /* readdir calls since armed */
    int fail_call; /* which of them fails with EIO (0 or -1: none; -1 counts them) */
} inject;

static void *failing(void *(*real)(void *), void *dir) {
    if (inject.fail_call && ++inject.calls == inject.fail_call) {
        errno = EIO;
        return NULL;
    }
    return real(dir);
}

void *__wrap_readdir(void *dir) { return failing(__real_readdir, dir); }
void *__wrap_readdir64(void *dir) { return failing(__real_readdir64, dir); }

static void touch(const char *path) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fclose(f), 0);
}

/* A failure at any point of the listing, in the top directory or one below, is an error naming
 * the directory and the cause; with no failure the same scan finds every clip. */
static void test_failed_listing_is_an_error(void **state) {
    (void)state;
    char top[1024], sub[1100], path[1200];
    snprintf(top, sizeof top, "%s/listing", pm_test_tmp_dir());
    snprintf(sub, sizeof sub, "%s/sub", top);
    assert_int_equal(mkdir(top, 0755), 0);
    assert_int_equal(mkdir(sub, 0755), 0);
    const char *clips[] = {"a.bvh", "b.bvh", "sub/c.bvh", "sub/d.bvh"};
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", top, clips[i]);
        touch(path);
    }
    char *inputs[] = {top};
    char **found;
    int count;
    pm_error err;
    inject.calls = 0;
    inject.fail_call = -1; /* none fails: count the calls of a whole scan */
    PM_ASSERT_OK(pm_cli_expand_inputs(&found, &count, inputs, 1, &err));
    assert_int_equal(count, 4);
    pm_cli_free_list(found, count);
    const int total = inject.calls;
    assert_true(total >= 2 * 5); /* ".", "..", two entries and the end, in each directory */
    for (int fail = 1; fail <= total; fail++) {
        inject.calls = 0;
        inject.fail_call = fail;
        found = NULL;
        count = -1;
        pm_result r = pm_cli_expand_inputs(&found, &count, inputs, 1, &err);
        inject.fail_call = 0;
        if (r != PM_ERR_IO) fail_msg("readdir call %d of %d failing: result %d, not PM_ERR_IO", fail, total, (int)r);
        assert_null(found);
        assert_int_equal(count, -1);
        if (!strstr(err.message, "cannot list the directory: ") || !strstr(err.message, strerror(EIO)) ||
            !strstr(err.message, "/listing"))
            fail_msg("readdir call %d failing: message '%s'", fail, err.message);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_failed_listing_is_an_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
