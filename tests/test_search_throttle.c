/* The search throttle (PS8, UE's SearchThrottleTime): how often a character searches at all,
 * whatever the update steps, forced searches and bad inputs. */
#include <math.h>

#include "support.h"

static void test_search_throttle(void **state) {
    (void)state;
    pm_search_throttle every = pm_search_throttle_make(0.0f);
    for (int i = 0; i < 100; i++) assert_int_equal(pm_search_throttle_update(&every, 1.0f / 60.0f, 0), 1);

    pm_search_throttle t = pm_search_throttle_make(0.2f);
    int searches[400], count = 0;
    for (int i = 0; i < 400; i++)
        if (pm_search_throttle_update(&t, 1.0f / 60.0f, 0)) searches[count++] = i;
    assert_int_equal(searches[0], 0);
    for (int k = 1; k < count; k++) assert_int_equal(searches[k] - searches[k - 1], 12);
    assert_int_equal(count, 34); /* updates 0, 12, ..., 396 */

    /* Steps whose float sum falls a hair short of the interval: 0.1 three times is 0.30000000447
     * in double, 0.3f is 0.30000001192. Still every third update, not every fourth. */
    pm_search_throttle short_sum = pm_search_throttle_make(0.3f);
    for (int i = 0; i < 30; i++) assert_int_equal(pm_search_throttle_update(&short_sum, 0.1f, 0), i % 3 == 0);

    /* Forced: searches now, and the next unforced one waits a whole interval from here. */
    pm_search_throttle f = pm_search_throttle_make(0.2f);
    assert_int_equal(pm_search_throttle_update(&f, 0.0f, 0), 1);
    for (int i = 0; i < 5; i++) assert_int_equal(pm_search_throttle_update(&f, 1.0f / 60.0f, 0), 0);
    assert_int_equal(pm_search_throttle_update(&f, 1.0f / 60.0f, 1), 1);
    for (int i = 0; i < 11; i++) assert_int_equal(pm_search_throttle_update(&f, 1.0f / 60.0f, 0), 0);
    assert_int_equal(pm_search_throttle_update(&f, 1.0f / 60.0f, 0), 1);

    /* Bad steps add nothing; a NaN or negative interval never holds a search back; an infinite
     * one searches once (a motion played to its end), then only when forced. */
    pm_search_throttle b = pm_search_throttle_make(0.1f);
    assert_int_equal(pm_search_throttle_update(&b, 0.0f, 0), 1);
    assert_int_equal(pm_search_throttle_update(&b, NAN, 0), 0);
    assert_int_equal(pm_search_throttle_update(&b, INFINITY, 0), 0);
    assert_int_equal(pm_search_throttle_update(&b, -5.0f, 0), 0);
    assert_int_equal(pm_search_throttle_update(&b, 0.1f, 0), 1);
    pm_search_throttle nan_interval = pm_search_throttle_make(NAN), neg = pm_search_throttle_make(-1.0f);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(pm_search_throttle_update(&nan_interval, 0.01f, 0), 1);
        assert_int_equal(pm_search_throttle_update(&neg, 0.01f, 0), 1);
    }
    pm_search_throttle once = pm_search_throttle_make(INFINITY);
    assert_int_equal(pm_search_throttle_update(&once, 0.01f, 0), 1);
    for (int i = 0; i < 1000; i++) assert_int_equal(pm_search_throttle_update(&once, 1.0f, 0), 0);
    assert_int_equal(pm_search_throttle_update(&once, 0.01f, 1), 1);
    assert_int_equal(pm_search_throttle_update(NULL, 0.01f, 0), 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_search_throttle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
