/* The file helpers when the default allocator runs out of memory. They allocate their temporary
 * names, link targets and pending-file lists through the default allocator (posix_memalign), which
 * no caller can replace, so this binary wraps posix_memalign at link time (--wrap, see
 * CMakeLists.txt) and refuses each call of a write or read in turn: every refusal is either done
 * without (the write completes) or PM_ERR_OUT_OF_MEMORY naming the file with the targets as they
 * were - no temporary file left either way, and the process's standard input untouched (a failed
 * temporary descriptor must not become fd 0). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support.h"

int __real_posix_memalign(void **out, size_t alignment, size_t size);
int __wrap_posix_memalign(void **out, size_t alignment, size_t size);

static struct {
    int armed;
    long calls; /* since armed */
    long fail_at; /* which call fails (1: the first) */
} inject;

int __wrap_posix_memalign(void **out, size_t alignment, size_t size) {
    if (inject.armed && ++inject.calls == inject.fail_at) return 12; /* ENOMEM */
    return __real_posix_memalign(out, alignment, size);
}

static void arm(long fail_at) {
    inject.calls = 0;
    inject.fail_at = fail_at;
    inject.armed = 1;
}

static long disarm(void) {
    inject.armed = 0;
    return inject.calls;
}

/* Standard input is /dev/null for the whole test: still open and still that device afterwards. */
static struct stat null_stat;

static void assert_stdin_untouched(void) {
    struct stat st;
    assert_int_equal(fstat(0, &st), 0);
    assert_true(st.st_rdev == null_stat.st_rdev && st.st_ino == null_stat.st_ino);
}

static int setup(void **state) {
    (void)state;
    int fd = open("/dev/null", O_RDONLY);
    if (fd < 0 || dup2(fd, 0) != 0 || fstat(0, &null_stat) != 0) return -1;
    if (fd != 0) close(fd);
    return 0;
}

/* A write through a relative link into another folder (the link's target is read into a buffer
 * and joined with the link's folder), then a set of three files at once. */
static void test_writes_out_of_memory(void **state) {
    (void)state;
    char d[512], real[600], target[640], link[600], paths[3][640];
    snprintf(d, sizeof d, "%s/oom-write", pm_test_tmp_dir());
    assert_int_equal(mkdir(d, 0755), 0);
    snprintf(real, sizeof real, "%s/real", d);
    assert_int_equal(mkdir(real, 0755), 0);
    snprintf(target, sizeof target, "%s/target.bin", real);
    snprintf(link, sizeof link, "%s/link", d);
    assert_int_equal(symlink("real/target.bin", link), 0);
    for (int i = 0; i < 3; i++) snprintf(paths[i], sizeof paths[i], "%s/set%d.bin", d, i);
    const char *set[3] = {paths[0], paths[1], paths[2]};
    const void *data[3] = {"new0", "new1", "new2"};
    const size_t sizes[3] = {4, 4, 4};
    for (int which = 0; which < 2; which++) {
        long failures = 0;
        for (long k = 1;; k++) {
            pm_test_put_text(target, "old");
            for (int i = 0; i < 3; i++) pm_test_put_text(paths[i], "old");
            pm_error e;
            arm(k);
            pm_result r = which == 0 ? pm_file_write(link, "new", 3, &e) : pm_file_write_all(3, set, data, sizes, &e);
            long calls = disarm();
            assert_stdin_untouched();
            assert_int_equal(pm_test_count_temp_files(d) + pm_test_count_temp_files(real), 0);
            if (calls < k) { /* no call failed: the write went through */
                PM_ASSERT_OK(r);
                pm_test_assert_file_text(which == 0 ? target : paths[2], which == 0 ? "new" : "new2");
                break;
            }
            if (r == PM_OK) { /* a refusal it could do without (a name for a file that needs none) */
                pm_test_assert_file_text(which == 0 ? target : paths[2], which == 0 ? "new" : "new2");
                continue;
            }
            failures++;
            if (r != PM_ERR_OUT_OF_MEMORY) fail_msg("write %d, allocation %ld refused: %s (%d)", which, k, e.message, r);
            assert_non_null(strstr(e.message, "out of memory"));
            pm_test_assert_file_text(target, "old");
            for (int i = 0; i < 3; i++) pm_test_assert_file_text(paths[i], "old");
        }
        assert_true(failures >= 1);
    }
}

/* A file read into a buffer of its own: the one allocation refused is an error naming the file. */
static void test_read_out_of_memory(void **state) {
    (void)state;
    char path[600];
    snprintf(path, sizeof path, "%s/oom-read.txt", pm_test_tmp_dir());
    pm_test_put_text(path, "some text");
    void *data = (void *)path;
    size_t size = 5;
    pm_error e;
    arm(1);
    pm_result r = pm_file_read(&data, &size, path, 0, NULL, &e);
    assert_int_equal(disarm(), 1);
    assert_int_equal(r, PM_ERR_OUT_OF_MEMORY);
    assert_null(data);
    assert_int_equal(size, 0);
    assert_non_null(strstr(e.message, "oom-read.txt: out of memory"));
    assert_stdin_untouched();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_writes_out_of_memory),
        cmocka_unit_test(test_read_out_of_memory),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
