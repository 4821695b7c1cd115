/* Schemas: presets, validation, the per-dimension layout and the JSON front end. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema_json.h"
#include "schema_layout.h"
#include "support.h"

static void test_presets(void **state) {
    (void)state;
    pm_schema s;
    PM_ASSERT_OK(pm_schema_preset(&s, "ue-locomotion", NULL));
    /* UE's default trajectory: 2 + 4 + 4 + 6 values; feet position + velocity 12; pelvis 3. */
    assert_int_equal(pm_schema_cardinality(&s), 31);
    assert_int_equal(s.channels[0].sample_count, 4);
    assert_float_equal(s.channels[0].samples[0].offset, -0.4f, 1e-6);
    assert_int_equal(s.channels[0].samples[1].flags, PM_TRAJ_VELOCITY_XY | PM_TRAJ_FACING_DIRECTION_XY);
    assert_float_equal(s.channels[0].samples[1].weight, 2.0f, 1e-6);
    PM_ASSERT_OK(pm_schema_preset(&s, "holden27", NULL));
    assert_int_equal(pm_schema_cardinality(&s), 27);
    /* A corrupt channel count is no read past the channels. */
    pm_schema bad = s;
    bad.channel_count = PM_MAX_CHANNELS + 1;
    assert_int_equal(pm_schema_cardinality(&bad), -1);
    bad.channel_count = -3;
    assert_int_equal(pm_schema_cardinality(&bad), -1);
    assert_int_equal(pm_schema_cardinality(NULL), -1);
    float past, future;
    PM_ASSERT_OK(pm_schema_time_window(&past, &future, &s, NULL));
    assert_float_equal(past, 0.0f, 1e-6);
    assert_false(signbit(past)); /* no past sample: +0, not the -0 of a negated 0 offset */
    assert_float_equal(future, 1.0f, 1e-6);
    pm_error err;
    assert_int_equal(pm_schema_preset(&s, "nope", &err), PM_ERR_NOT_FOUND);
    assert_non_null(strstr(err.message, "nope"));
}

static void test_validation(void **state) {
    (void)state;
    pm_schema s;
    pm_error err;
    pm_schema_init(&s);
    assert_int_equal(pm_schema_validate(&s, &err), PM_ERR_INVALID_ARGUMENT);
    pm_channel_def c = pm_default_channel_def(PM_FEATURE_POSITION);
    assert_int_equal(pm_schema_add(&s, &c, &err), -1); /* no bone */
    assert_non_null(strstr(err.message, "bone"));
    strcpy(c.bone, "@left_foot");
    c.weight = -1.0f;
    assert_int_equal(pm_schema_add(&s, &c, &err), -1);
    assert_non_null(strstr(err.message, "weight"));
    c.weight = NAN;
    assert_int_equal(pm_schema_add(&s, &c, &err), -1);
    c.weight = 1.0f;
    c.parent = 0; /* no channel 0 yet */
    assert_int_equal(pm_schema_add(&s, &c, &err), -1);
    c.parent = -1;
    assert_int_equal(pm_schema_add(&s, &c, &err), 0);
    pm_channel_def child = c;
    child.parent = 0; /* a Position is not a Group */
    assert_int_equal(pm_schema_add(&s, &child, &err), -1);
    assert_non_null(strstr(err.message, "not a Group"));
    pm_channel_def t = pm_default_channel_def(PM_FEATURE_TRAJECTORY);
    assert_int_equal(pm_schema_add(&s, &t, &err), -1); /* no samples */
    t.sample_count = 1;
    t.samples[0].flags = 1u << 9;
    assert_int_equal(pm_schema_add(&s, &t, &err), -1);
    t.samples[0].flags = PM_TRAJ_POSITION_XY;
    t.samples[0].offset = INFINITY;
    assert_int_equal(pm_schema_add(&s, &t, &err), -1);
    pm_channel_def pad = pm_default_channel_def(PM_FEATURE_PADDING);
    pad.size = 0;
    assert_int_equal(pm_schema_add(&s, &pad, &err), -1);
    pad.size = 3;
    assert_int_equal(pm_schema_add(&s, &pad, &err), 1);
    assert_int_equal(pm_schema_cardinality(&s), 6);
    /* Weights multiply down groups up to PM_MAX_WEIGHT, named with the channel and sample. */
    pm_channel_def g = pm_default_channel_def(PM_FEATURE_GROUP);
    g.weight = 1e4f;
    assert_int_equal(pm_schema_add(&s, &g, &err), 2);
    child = c;
    child.parent = 2;
    child.weight = 1e3f;
    assert_int_equal(pm_schema_add(&s, &child, &err), -1);
    assert_non_null(strstr(err.message, "exceeds"));
    child.weight = 100.0f; /* 1e6 exactly */
    assert_int_equal(pm_schema_add(&s, &child, &err), 3);
    t.parent = 2;
    t.samples[0].offset = 0.5f;
    t.samples[0].weight = 200.0f;
    assert_int_equal(pm_schema_add(&s, &t, &err), -1);
    assert_non_null(strstr(err.message, "sample 0"));
    /* Only what a dimension weighs counts: a heavy group or trajectory whose parts are light. */
    g.weight = 4e6f;
    assert_int_equal(pm_schema_add(&s, &g, &err), 4);
    child.parent = 4;
    child.weight = 0.1f;
    assert_int_equal(pm_schema_add(&s, &child, &err), 5);
    t.parent = -1;
    t.weight = 4e6f;
    t.samples[0].weight = 0.1f;
    assert_int_equal(pm_schema_add(&s, &t, &err), 6);
}

static void test_layout_groups(void **state) {
    (void)state;
    pm_schema s;
    pm_schema_layout l;
    PM_ASSERT_OK(pm_schema_preset(&s, "holden27", NULL));
    PM_ASSERT_OK(pm_schema_layout_compute(&l, &s, NULL));
    assert_int_equal(l.cardinality, 27);
    /* Left and right foot positions share a named group; velocities another; hips its own. */
    assert_int_equal(l.dim_group[0], l.dim_group[3]);
    assert_int_equal(l.dim_group[6], l.dim_group[9]);
    assert_int_not_equal(l.dim_group[0], l.dim_group[6]);
    assert_int_not_equal(l.dim_group[6], l.dim_group[12]);
    /* All samples of one trajectory channel share its deviation. */
    assert_int_equal(l.dim_group[15], l.dim_group[19]);
    assert_int_not_equal(l.dim_group[15], l.dim_group[21]);
    assert_float_equal(l.dim_weight[0], 0.5625f, 1e-6);
    assert_float_equal(l.dim_weight[21], 2.25f, 1e-6);
    /* Group weights multiply down the tree and lend their group name. */
    pm_schema g;
    pm_schema_init(&g);
    pm_channel_def grp = pm_default_channel_def(PM_FEATURE_GROUP);
    grp.weight = 3.0f;
    strcpy(grp.group, "feet");
    int gi = pm_schema_add(&g, &grp, NULL);
    pm_channel_def a = pm_default_channel_def(PM_FEATURE_POSITION);
    strcpy(a.bone, "@left_foot");
    a.weight = 2.0f;
    a.parent = gi;
    pm_schema_add(&g, &a, NULL);
    strcpy(a.bone, "@right_foot");
    pm_schema_add(&g, &a, NULL);
    PM_ASSERT_OK(pm_schema_layout_compute(&l, &g, NULL));
    assert_int_equal(l.cardinality, 6);
    assert_float_equal(l.dim_weight[4], 6.0f, 1e-6);
    assert_int_equal(l.dim_group[0], l.dim_group[5]);
    /* Without a group name each channel normalises alone, even beside another of the same kind
     * and size: ue-locomotion's left and right foot positions keep deviations of their own. */
    PM_ASSERT_OK(pm_schema_preset(&s, "ue-locomotion", NULL));
    PM_ASSERT_OK(pm_schema_layout_compute(&l, &s, NULL));
    int left = -1, right = -1;
    for (int d = 0; d < l.cardinality; d++) {
        if (l.dim_channel[d] == 1 && left < 0) left = d;
        if (l.dim_channel[d] == 3 && right < 0) right = d;
    }
    assert_true(left >= 0 && right >= 0);
    assert_int_equal(s.channels[1].kind, s.channels[3].kind);
    assert_int_not_equal(l.dim_group[left], l.dim_group[right]);
    /* Padding is never weighed, whatever weight its channel was given. */
    pm_schema_init(&g);
    pm_channel_def pad = pm_default_channel_def(PM_FEATURE_PADDING);
    pad.size = 2;
    pad.weight = 5.0f;
    assert_int_equal(pm_schema_add(&g, &pad, NULL), 0);
    strcpy(a.bone, "@hips");
    a.parent = -1;
    assert_int_equal(pm_schema_add(&g, &a, NULL), 1);
    PM_ASSERT_OK(pm_schema_layout_compute(&l, &g, NULL));
    assert_int_equal(l.cardinality, 5);
    assert_float_equal(l.dim_weight[0], 0.0f, 0.0f);
    assert_float_equal(l.dim_weight[1], 0.0f, 0.0f);
    assert_float_equal(l.dim_weight[2], 2.0f, 0.0f);
}

static void test_json(void **state) {
    (void)state;
    const char *text = "{ \"name\": \"mine\", \"channels\": ["
                       " {\"kind\": \"trajectory\", \"samples\": [{\"offset\": 0.5, \"weight\": 2, \"flags\": [\"PositionXY\", \"FacingDirectionXY\"]}]},"
                       " {\"kind\": \"group\", \"weight\": 2, \"group\": \"feet\", \"channels\": ["
                       "    {\"kind\": \"position\", \"bone\": \"@left_foot\", \"components\": \"xy\"},"
                       "    {\"kind\": \"heading\", \"bone\": \"Hips\", \"axis\": \"x\"}]},"
                       " {\"kind\": \"padding\", \"size\": 2} ] }";
    pm_schema s;
    pm_error err;
    PM_ASSERT_OK(pm_schema_from_json(&s, text, "mine.json", NULL, &err));
    assert_string_equal(s.name, "mine");
    assert_int_equal(s.channel_count, 5);
    assert_int_equal(pm_schema_cardinality(&s), 4 + 2 + 3 + 2);
    assert_int_equal(s.channels[2].parent, 1);
    assert_int_equal(s.channels[3].axis, 0);
    /* Round trip through the writer. */
    char *again = pm_schema_to_json(&s);
    pm_schema s2;
    PM_ASSERT_OK(pm_schema_from_json(&s2, again, "again", NULL, &err));
    free(again);
    assert_int_equal(s2.channel_count, s.channel_count);
    assert_int_equal(s2.channels[2].parent, 1);
    assert_int_equal(s2.channels[0].samples[0].flags, s.channels[0].samples[0].flags);
    /* Errors name the file and the field. */
    struct {
        const char *json, *needle;
    } bad[] = {
        {"{\"channels\": [{\"kind\": \"bogus\"}]}", "channels[0].kind"},
        {"{\"channels\": [{\"kind\": \"position\", \"bone\": \"@hips\", \"weight\": \"x\"}]}", "channels[0].weight"},
        {"{\"channels\": [{\"kind\": \"trajectory\", \"samples\": [{\"flags\": [\"Sideways\"]}]}]}", "samples[0].flags"},
        {"{\"channels\": [{\"kind\": \"trajectory\", \"samples\": [{\"flags\": [\"Position\", \"Position\"]}]}]}",
         "samples[0].flags: flag 'Position' is listed twice"},
        {"{\"channels\": [{\"kind\": \"position\", \"bone\": \"@hips\", \"colour\": 1}]}", "channels[0].colour"},
        {"{\"channels\": [{\"kind\": \"position\"}]}", "bone"},
        {"{\"channels\": 3}", "channels"},
        {"{\"channels\": [{\"kind\": \"group\", \"channels\": [{\"kind\": \"position\", \"bone\": \"@right_fot\"}]}]}",
         "channels[0].channels[0]: schema channel 1 (Position @right_fot): unknown role '@right_fot'"},
        {"{\"channels\": [", "bad.json:1"},
        /* Fields the kind does not read, fractional sizes and control characters in names. */
        {"{\"channels\": [{\"kind\": \"position\", \"bone\": \"@hips\", \"size\": 2}]}",
         "channels[0].size: a position channel has no \"size\" field"},
        {"{\"channels\": [{\"kind\": \"padding\", \"size\": 1.5}]}", "channels[0].size: must be a whole number"},
        {"{\"channels\": [{\"kind\": \"position\", \"bone\": \"@hips\"}, {\"kind\": \"padding\", \"weight\": 2}]}",
         "channels[1].weight: a padding channel always weighs 0"},
        {"{\"channels\": [{\"kind\": \"velocity\", \"bone\": \"@hips\", \"name\": \"a\\nb\"}]}",
         "channels[0].name: has a control character"},
        /* Weights multiply down groups up to PM_MAX_WEIGHT. */
        {"{\"channels\": [{\"kind\": \"group\", \"weight\": 1e6, \"channels\": [{\"kind\": \"group\", \"weight\": 1e6, "
         "\"channels\": [{\"kind\": \"velocity\", \"bone\": \"@hips\"}]}]}]}",
         "channels[0].channels[0].channels[0]: schema channel 2 (Velocity @hips): weight 1e+12"},
        {"[1, 2]", "(top)"},
        /* Every other refusal names its field and says what is wrong. */
        {"[1, 2]", "bad.json: (top): expected an object with \"channels\""},
        {"{\"channels\": [], \"colour\": 1}", "bad.json: (top).colour: unknown field"},
        {"{\"name\": \"x\"}", "bad.json: channels: missing"},
        {"{\"channels\": [3]}", "bad.json: channels[0]: expected an object"},
        {"{\"channels\": [{\"bone\": \"@hips\"}]}", "channels[0].kind: missing or not a string"},
        {"{\"channels\": [{\"kind\": \"bogus\"}]}",
         "channels[0].kind: unknown kind 'bogus' (trajectory, position, velocity, heading, phase, curve, padding, group)"},
        {"{\"channels\": [{\"kind\": \"position\", \"bone\": \"@hips\", \"kind\": \"velocity\"}]}",
         "channels[0].kind: appears twice"},
        {"{\"channels\": [{\"kind\": \"position\", \"bone\": \"@hips\", \"weight\": -1}]}",
         "channels[0].weight: -1 is outside 0..1e+06"},
        {"{\"channels\": [{\"kind\": \"position\", \"bone\": \"@hips\", \"offset\": 61}]}",
         "channels[0].offset: 61 is outside -60..60"},
        {"{\"channels\": [{\"kind\": \"padding\", \"size\": 65}]}", "channels[0].size: 65 is outside 1..64"},
        {"{\"channels\": [{\"kind\": \"padding\", \"size\": 0}]}", "channels[0].size: 0 is outside 1..64"},
        {"{\"channels\": [{\"kind\": \"padding\", \"offset\": 0.5}]}", "channels[0].offset: a padding channel has no \"offset\" field"},
        {"{\"channels\": [{\"kind\": \"trajectory\", \"components\": \"xy\"}]}",
         "channels[0].components: a trajectory channel has no \"components\" field"},
        {"{\"channels\": [{\"kind\": \"phase\", \"bone\": \"@hips\", \"components\": \"xy\"}]}",
         "channels[0].components: a phase channel has no \"components\" field"},
        {"{\"channels\": [{\"kind\": \"position\", \"bone\": \"@hips\", \"axis\": \"x\"}]}",
         "channels[0].axis: a position channel has no \"axis\" field"},
        {"{\"channels\": [{\"kind\": \"position\", \"bone\": \"@hips\", \"curve\": \"c\"}]}",
         "channels[0].curve: a position channel has no \"curve\" field"},
        {"{\"channels\": [{\"kind\": \"position\", \"bone\": \"@hips\", \"samples\": []}]}",
         "channels[0].samples: a position channel has no \"samples\" field"},
        {"{\"channels\": [{\"kind\": \"position\", \"bone\": \"@hips\", \"channels\": []}]}",
         "channels[0].channels: a position channel has no \"channels\" field"},
        {"{\"channels\": [{\"kind\": \"trajectory\", \"bone\": \"@hips\"}]}", "channels[0].bone: a trajectory channel has no \"bone\" field"},
        {"{\"channels\": [{\"kind\": \"position\", \"bone\": \"@hips\", \"components\": \"xz\"}]}",
         "channels[0].components: must be \"xyz\" or \"xy\""},
        {"{\"channels\": [{\"kind\": \"heading\", \"bone\": \"@hips\", \"axis\": \"w\"}]}", "channels[0].axis: must be \"x\", \"y\" or \"z\""},
        {"{\"channels\": [{\"kind\": \"heading\", \"bone\": \"@hips\", \"axis\": \"xy\"}]}", "channels[0].axis: must be \"x\", \"y\" or \"z\""},
        {"{\"channels\": [{\"kind\": \"heading\", \"bone\": \"@hips\", \"axis\": \"v\"}]}", "channels[0].axis: must be \"x\", \"y\" or \"z\""},
        {"{\"channels\": [{\"kind\": \"heading\", \"bone\": \"@hips\", \"axis\": 1}]}", "channels[0].axis: expected a string"},
        {"{\"channels\": [{\"kind\": \"position\", \"bone\": \"@hips\", \"weight\": null}]}", "channels[0].weight: expected a number"},
        {"{\"channels\": [{\"kind\": \"trajectory\", \"samples\": {}}]}", "channels[0].samples: expected an array"},
        {"{\"channels\": [{\"kind\": \"trajectory\", \"samples\": [1]}]}", "channels[0].samples[0]: expected an object"},
        {"{\"channels\": [{\"kind\": \"trajectory\", \"samples\": [{\"flags\": [\"Position\"], \"colour\": 1}]}]}",
         "channels[0].samples[0].colour: unknown field"},
        {"{\"channels\": [{\"kind\": \"trajectory\", \"samples\": [{\"flags\": [\"Position\"], \"offset\": 0.1, \"offset\": 0.2}]}]}",
         "channels[0].samples[0].offset: appears twice"},
        {"{\"channels\": [{\"kind\": \"trajectory\", \"samples\": [{\"flags\": []}]}]}",
         "channels[0].samples[0].flags: expected a non-empty array of flag names"},
        {"{\"channels\": [{\"kind\": \"trajectory\", \"samples\": [{\"offset\": 0.5}]}]}",
         "channels[0].samples[0].flags: expected a non-empty array of flag names"},
        {"{\"channels\": [{\"kind\": \"trajectory\", \"samples\": [{\"flags\": [3]}]}]}",
         "channels[0].samples[0].flags: unknown flag '(not a string)' (Velocity, Position, VelocityDirection, FacingDirection"},
        {"{\"channels\": [{\"kind\": \"trajectory\", \"samples\": [{\"flags\": [\"Position\"], \"offset\": -61}]}]}",
         "channels[0].samples[0].offset: -61 is outside -60..60"},
        {"{\"channels\": [{\"kind\": \"trajectory\", \"samples\": [{\"flags\": [\"Position\"], \"weight\": -0.5}]}]}",
         "channels[0].samples[0].weight: -0.5 is outside 0..1e+06"},
        {"{\"channels\": [{\"kind\": \"position\", \"bone\": \"@hips\", \"weight\": 0}]}",
         "bad.json: every feature's weight is 0"},
        {"{\"channels\": [{\"kind\": \"group\", \"weight\": 0, \"channels\": [{\"kind\": \"velocity\", \"bone\": \"@hips\"}]}]}",
         "bad.json: every feature's weight is 0"},
        {"{\"channels\": [{\"kind\": \"trajectory\", \"weight\": 0, \"samples\": [{\"flags\": [\"Position\"]}]}]}",
         "bad.json: every feature's weight is 0"},
        {"{\"channels\": [{\"kind\": \"padding\", \"size\": 3}]}", "bad.json: every feature's weight is 0"},
        {"{\"channels\": [{\"kind\": \"group\", \"channels\": 1}]}", "channels[0].channels: expected an array of channels"},
        {"{\"channels\": [{\"kind\": \"padding\", \"size\": 1}, {\"kind\": \"group\", \"channels\": [{\"kind\": \"padding\", \"size\": 1}, "
         "{\"kind\": \"position\", \"bone\": \"@hips\", \"weight\": \"w\"}]}]}",
         "channels[1].channels[1].weight: expected a number"},
        {"{\"channels\": [{\"kind\": \"velocity\", \"bone\": 5}]}", "channels[0].bone: expected a string"},
        {"{\"channels\": [{\"kind\": \"curve\", \"curve\": \"c\", \"group\": \"g\\u0001\"}]}", "channels[0].group: has a control character"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&err, 0, sizeof err);
        assert_int_not_equal(pm_schema_from_json(&s, bad[i].json, "bad.json", NULL, &err), PM_OK);
        if (!strstr(err.message, bad[i].needle)) fail_msg("'%s' does not mention '%s'", err.message, bad[i].needle);
        assert_non_null(strstr(err.message, "bad.json"));
    }
}

/* What each field sets, through the writer and back: offsets of bone and curve channels,
 * components, axes, sizes, groups, names and every trajectory sample; names of 63 bytes fit and
 * of 64 are "too long" (never cut: a cut name could match another joint); 16 samples fit, 17 do
 * not; a file without "name" is named after the file. */
static void test_json_fields(void **state) {
    (void)state;
    const char *text =
        "{\"name\": \"fields\", \"channels\": ["
        " {\"kind\": \"position\", \"bone\": \"@left_foot\", \"offset\": 0.25, \"components\": \"xy\", \"name\": \"lf\", \"group\": \"feet\"},"
        " {\"kind\": \"velocity\", \"bone\": \"Hips\", \"offset\": -0.5, \"weight\": 3},"
        " {\"kind\": \"heading\", \"bone\": \"@hips\", \"axis\": \"y\", \"components\": \"xyz\"},"
        " {\"kind\": \"heading\", \"bone\": \"@hips\", \"axis\": \"z\", \"components\": \"xy\"},"
        " {\"kind\": \"phase\", \"bone\": \"@right_foot\", \"offset\": 0.1},"
        " {\"kind\": \"curve\", \"curve\": \"speed\", \"offset\": 0.2},"
        " {\"kind\": \"padding\", \"size\": 3},"
        " {\"kind\": \"trajectory\", \"samples\": [{\"offset\": -0.3, \"weight\": 0.5, \"flags\": [\"Velocity\", \"FacingDirectionXY\"]},"
        "   {\"offset\": 60, \"flags\": [\"PositionXY\", \"VelocityDirection\"]}]} ] }";
    pm_schema s;
    pm_error err;
    PM_ASSERT_OK(pm_schema_from_json(&s, text, "fields.json", NULL, &err));
    assert_int_equal(s.channel_count, 8);
    assert_true(s.channels[0].offset == 0.25f && s.channels[0].components == PM_COMPONENTS_XY);
    assert_string_equal(s.channels[0].name, "lf");
    assert_string_equal(s.channels[0].group, "feet");
    assert_string_equal(s.channels[0].bone, "@left_foot");
    assert_true(s.channels[1].offset == -0.5f && s.channels[1].weight == 3.0f && s.channels[1].components == PM_COMPONENTS_XYZ);
    assert_int_equal(s.channels[2].axis, 1);
    assert_int_equal(s.channels[3].axis, 2);
    assert_int_equal(s.channels[3].components, PM_COMPONENTS_XY);
    assert_true(s.channels[4].offset == 0.1f);
    assert_true(s.channels[5].offset == 0.2f);
    assert_string_equal(s.channels[5].curve, "speed");
    assert_int_equal(s.channels[6].size, 3);
    assert_true(s.channels[6].weight == 0.0f);
    assert_int_equal(s.channels[7].sample_count, 2);
    assert_true(s.channels[7].samples[0].offset == -0.3f && s.channels[7].samples[0].weight == 0.5f);
    assert_true(s.channels[7].samples[1].offset == 60.0f && s.channels[7].samples[1].weight == 1.0f);
    char *again = pm_schema_to_json(&s);
    pm_schema s2;
    PM_ASSERT_OK(pm_schema_from_json(&s2, again, "again", NULL, &err));
    free(again);
    assert_string_equal(s2.name, "fields");
    assert_int_equal(s2.channel_count, s.channel_count);
    for (int i = 0; i < s.channel_count; i++) {
        const pm_channel_def *a = &s.channels[i], *b = &s2.channels[i];
        assert_int_equal(a->kind, b->kind);
        assert_string_equal(a->name, b->name);
        assert_string_equal(a->bone, b->bone);
        assert_string_equal(a->curve, b->curve);
        assert_string_equal(a->group, b->group);
        assert_true(a->weight == b->weight && a->offset == b->offset);
        assert_int_equal(a->components, b->components);
        assert_int_equal(a->axis, b->axis);
        assert_int_equal(a->size, b->size);
        assert_int_equal(a->parent, b->parent);
        assert_int_equal(a->sample_count, b->sample_count);
        for (int k = 0; k < a->sample_count; k++) {
            assert_true(a->samples[k].offset == b->samples[k].offset && a->samples[k].weight == b->samples[k].weight);
            assert_int_equal(a->samples[k].flags, b->samples[k].flags);
        }
    }
    /* Names up to the field's size less one. */
    char json[4096], name[PM_NAME_SIZE + 1];
    memset(name, 'n', PM_NAME_SIZE - 1);
    name[PM_NAME_SIZE - 1] = '\0';
    snprintf(json, sizeof json, "{\"name\": \"%s\", \"channels\": [{\"kind\": \"velocity\", \"bone\": \"@hips\", \"name\": \"%s\"}]}",
             name, name);
    PM_ASSERT_OK(pm_schema_from_json(&s, json, "long.json", NULL, &err));
    assert_string_equal(s.channels[0].name, name);
    name[PM_NAME_SIZE - 1] = 'n';
    name[PM_NAME_SIZE] = '\0';
    snprintf(json, sizeof json, "{\"channels\": [{\"kind\": \"velocity\", \"bone\": \"%s\"}]}", name);
    assert_int_equal(pm_schema_from_json(&s, json, "long.json", NULL, &err), PM_ERR_PARSE);
    assert_non_null(strstr(err.message, "long.json: channels[0].bone: too long"));
    snprintf(json, sizeof json, "{\"name\": \"%s\", \"channels\": [{\"kind\": \"velocity\", \"bone\": \"@hips\"}]}", name);
    assert_int_equal(pm_schema_from_json(&s, json, "long.json", NULL, &err), PM_ERR_PARSE);
    assert_non_null(strstr(err.message, "long.json: (top).name: too long"));
    /* 16 trajectory samples, then 17. */
    int n = snprintf(json, sizeof json, "{\"channels\": [{\"kind\": \"trajectory\", \"samples\": [");
    for (int k = 0; k < PM_MAX_TRAJECTORY_SAMPLES; k++)
        n += snprintf(json + n, sizeof json - (size_t)n, "%s{\"offset\": %d, \"flags\": [\"Position\"]}", k ? ", " : "", k);
    snprintf(json + n, sizeof json - (size_t)n, "]}]}");
    PM_ASSERT_OK(pm_schema_from_json(&s, json, "t.json", NULL, &err));
    assert_int_equal(s.channels[0].sample_count, PM_MAX_TRAJECTORY_SAMPLES);
    snprintf(json + n, sizeof json - (size_t)n, ", {\"offset\": 30, \"flags\": [\"Position\"]}]}]}");
    assert_int_equal(pm_schema_from_json(&s, json, "t.json", NULL, &err), PM_ERR_PARSE);
    assert_non_null(strstr(err.message, "t.json: channels[0].samples[16]: too many samples (16 at most)"));
    /* A file without "name" is named after the file; with one, by it. */
    const char *path = pm_test_tmp_path("unnamed_schema.json");
    const char *unnamed = "{\"channels\": [{\"kind\": \"velocity\", \"bone\": \"@hips\"}]}";
    pm_test_write_file(path, unnamed, strlen(unnamed));
    PM_ASSERT_OK(pm_schema_load_json(&s, path, NULL, &err));
    assert_string_equal(s.name, "unnamed_schema.json");
    PM_ASSERT_OK(pm_schema_resolve(&s, path, NULL, &err));
    assert_string_equal(s.name, "unnamed_schema.json");
    remove(path);
}

/* The time window checks what it reads: NULL arguments by name, the channel count, trajectory
 * sample counts and offsets that are not finite, naming the channel; the outputs stay untouched. */
/* The window a database needs around a pose: bone and curve channels reach as far as their
 * offsets on both sides, while Padding and Group channels read no frame, so their offsets
 * (which validation allows) must not lengthen the clips every asset needs. */
static void test_time_window_of_channels(void **state) {
    (void)state;
    pm_schema s;
    pm_schema_init(&s);
    pm_channel_def c = pm_default_channel_def(PM_FEATURE_POSITION);
    strcpy(c.bone, "@hips");
    c.offset = 0.5f;
    assert_int_equal(pm_schema_add(&s, &c, NULL), 0);
    c = pm_default_channel_def(PM_FEATURE_CURVE);
    strcpy(c.curve, "phase");
    c.offset = -0.25f;
    assert_int_equal(pm_schema_add(&s, &c, NULL), 1);
    c = pm_default_channel_def(PM_FEATURE_PADDING);
    c.offset = 10.0f;
    assert_int_equal(pm_schema_add(&s, &c, NULL), 2);
    c.offset = -10.0f;
    assert_int_equal(pm_schema_add(&s, &c, NULL), 3);
    c = pm_default_channel_def(PM_FEATURE_GROUP);
    c.offset = 20.0f;
    assert_int_equal(pm_schema_add(&s, &c, NULL), 4);
    float past = -1.0f, future = -1.0f;
    PM_ASSERT_OK(pm_schema_time_window(&past, &future, &s, NULL));
    assert_float_equal(past, 0.25f, 0.0f);
    assert_float_equal(future, 0.5f, 0.0f);
}

static void test_time_window_errors(void **state) {
    (void)state;
    pm_schema s;
    PM_ASSERT_OK(pm_schema_preset(&s, "ue-locomotion", NULL));
    float past = -7.0f, future = -7.0f;
    pm_error err;
    assert_int_equal(pm_schema_time_window(NULL, &future, &s, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_schema_time_window: out_past is NULL");
    assert_int_equal(pm_schema_time_window(&past, NULL, &s, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_schema_time_window: out_future is NULL");
    assert_int_equal(pm_schema_time_window(&past, &future, NULL, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_schema_time_window: schema is NULL");
    pm_schema bad = s;
    bad.channel_count = PM_MAX_CHANNELS + 1;
    assert_int_equal(pm_schema_time_window(&past, &future, &bad, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "129 channels is outside 0..128"));
    bad = s;
    bad.channels[0].sample_count = PM_MAX_TRAJECTORY_SAMPLES + 1; /* would read past samples[] */
    assert_int_equal(pm_schema_time_window(&past, &future, &bad, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "schema channel 0: 17 trajectory samples is outside 0..16"));
    bad = s;
    bad.channels[0].samples[2].offset = NAN;
    assert_int_equal(pm_schema_time_window(&past, &future, &bad, &err), PM_ERR_NUMERIC);
    assert_non_null(strstr(err.message, "schema channel 0 sample 2: offset nan is not finite"));
    bad = s;
    bad.channels[1].offset = INFINITY;
    assert_int_equal(pm_schema_time_window(&past, &future, &bad, &err), PM_ERR_NUMERIC);
    assert_non_null(strstr(err.message, "schema channel 1: offset inf is not finite"));
    assert_int_equal(pm_schema_time_window(&past, &future, &bad, NULL), PM_ERR_NUMERIC);
    assert_true(past == -7.0f && future == -7.0f);
    /* An empty schema reads nothing. */
    pm_schema_init(&bad);
    PM_ASSERT_OK(pm_schema_time_window(&past, &future, &bad, &err));
    assert_true(past == 0.0f && future == 0.0f);
    PM_ASSERT_OK(pm_schema_time_window(&past, &future, &s, &err));
    assert_float_equal(past, 0.4f, 1e-6);
}

/* The functions without an error out are safe with NULL: init does nothing, a NULL channel
 * has size 0 and the display name "", a NULL or empty buffer is not written. */
static void test_null_arguments(void **state) {
    (void)state;
    pm_schema_init(NULL);
    assert_int_equal(pm_channel_size(NULL), 0);
    char buf[8];
    memset(buf, 'x', sizeof buf);
    pm_channel_display_name(buf, sizeof buf, NULL);
    assert_string_equal(buf, "");
    pm_channel_def ch = pm_default_channel_def(PM_FEATURE_VELOCITY);
    strcpy(ch.bone, "Hips");
    pm_channel_display_name(NULL, 8, &ch);
    memset(buf, 'x', sizeof buf);
    pm_channel_display_name(buf, 0, &ch);
    assert_true(buf[0] == 'x');
    pm_channel_display_name(buf, sizeof buf, &ch);
    assert_string_equal(buf, "Velocit"); /* cut to fit */
    /* A name that fills its field without a NUL is read no further than the field. */
    memset(ch.name, 'n', sizeof ch.name);
    char wide[2 * PM_NAME_SIZE];
    pm_channel_display_name(wide, sizeof wide, &ch);
    assert_int_equal(strlen(wide), PM_NAME_SIZE);
}

/* Every field a channel is checked on gets its own message, naming the channel and the field;
 * pm_schema_add refuses the channel and leaves the schema as it was. */
static void expect_channel_error(pm_schema *s, const pm_channel_def *c, pm_result code, const char *words) {
    pm_error err;
    memset(&err, 0, sizeof err);
    int before = s->channel_count;
    assert_int_equal(pm_schema_add(s, c, &err), -1);
    if (err.code != code) fail_msg("'%s': code %d, expected %d", err.message, (int)err.code, (int)code);
    if (!strstr(err.message, words)) fail_msg("'%s' does not say '%s'", err.message, words);
    assert_int_equal(s->channel_count, before);
    /* The same channel placed directly fails validation with the same message. */
    pm_schema copy = *s;
    copy.channels[copy.channel_count++] = *c;
    memset(&err, 0, sizeof err);
    assert_int_equal(pm_schema_validate(&copy, &err), code);
    if (!strstr(err.message, words)) fail_msg("validate: '%s' does not say '%s'", err.message, words);
}

static void test_channel_field_errors(void **state) {
    (void)state;
    static pm_schema s; /* static: a schema is about 62 KB */
    pm_schema_init(&s);
    pm_channel_def pos = pm_default_channel_def(PM_FEATURE_POSITION);
    strcpy(pos.bone, "Hips");
    assert_int_equal(pm_schema_add(&s, &pos, NULL), 0);

    pm_channel_def c = pos;
    memset(c.bone, 'b', sizeof c.bone);
    expect_channel_error(&s, &c, PM_ERR_INVALID_ARGUMENT,
                         "schema channel 1: field 'bone' is not NUL-terminated (at most 63 bytes)");
    c = pos;
    memset(c.group, 'g', sizeof c.group);
    expect_channel_error(&s, &c, PM_ERR_INVALID_ARGUMENT, "field 'group' is not NUL-terminated");
    /* Control characters are refused as the JSON reader refuses them: a newline in a name would
     * split the one-line messages and outputs that quote it. */
    c = pos;
    strcpy(c.name, "left\nfoot");
    expect_channel_error(&s, &c, PM_ERR_INVALID_ARGUMENT,
                         "schema channel 1: field 'name' has a control character (byte 0x0a at offset 4)");
    c = pos;
    strcpy(c.group, "g\x7f");
    expect_channel_error(&s, &c, PM_ERR_INVALID_ARGUMENT, "field 'group' has a control character (byte 0x7f");
    s.name[0] = '\t';
    pm_error name_error;
    assert_int_equal(pm_schema_validate(&s, &name_error), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(name_error.message, "schema: field 'name' has a control character (byte 0x09"));
    memset(s.name, 'n', sizeof s.name);
    assert_int_equal(pm_schema_validate(&s, &name_error), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(name_error.message, "schema: field 'name' is not NUL-terminated"));
    s.name[0] = '\0';
    PM_ASSERT_OK(pm_schema_validate(&s, NULL));
    /* An unknown kind is named before anything is read by kind ("?" for its display name). */
    c = pm_default_channel_def(PM_FEATURE_POSITION);
    c.kind = (pm_feature_kind)8;
    expect_channel_error(&s, &c, PM_ERR_INVALID_ARGUMENT, "schema channel 1: unknown kind 8");
    char label[32];
    pm_channel_display_name(label, sizeof label, &c);
    assert_string_equal(label, "?");
    assert_int_equal(pm_channel_size(&c), 0);
    c.kind = (pm_feature_kind)-1;
    expect_channel_error(&s, &c, PM_ERR_INVALID_ARGUMENT, "unknown kind -1");
    c = pos;
    c.offset = 60.5f;
    expect_channel_error(&s, &c, PM_ERR_INVALID_ARGUMENT,
                         "schema channel 1 (Position Hips): field 'offset' must be within +-60 s");
    c.offset = NAN;
    expect_channel_error(&s, &c, PM_ERR_INVALID_ARGUMENT, "field 'offset'");
    c = pos;
    c.components = (pm_components)2;
    expect_channel_error(&s, &c, PM_ERR_INVALID_ARGUMENT, "(Position Hips): components 2 is neither xyz (0) nor xy (1)");
    c = pos;
    c.kind = PM_FEATURE_HEADING;
    c.axis = 3;
    expect_channel_error(&s, &c, PM_ERR_INVALID_ARGUMENT, "(Heading Hips): axis 3 is not 0, 1 or 2");
    c.axis = -1;
    expect_channel_error(&s, &c, PM_ERR_INVALID_ARGUMENT, "axis -1 is not 0, 1 or 2");
    c = pm_default_channel_def(PM_FEATURE_CURVE);
    expect_channel_error(&s, &c, PM_ERR_INVALID_ARGUMENT, "schema channel 1 (Curve): field 'curve' is empty");
    c = pm_default_channel_def(PM_FEATURE_TRAJECTORY);
    c.sample_count = 2;
    c.samples[0].flags = c.samples[1].flags = PM_TRAJ_POSITION_XY;
    c.samples[1].weight = -0.5f;
    expect_channel_error(&s, &c, PM_ERR_INVALID_ARGUMENT,
                         "schema channel 1 (Trajectory) sample 1: weight must be finite and >= 0");
    c.samples[1].weight = INFINITY;
    expect_channel_error(&s, &c, PM_ERR_INVALID_ARGUMENT, "sample 1: weight must be finite");
    c = pm_default_channel_def(PM_FEATURE_PADDING);
    c.size = 65;
    expect_channel_error(&s, &c, PM_ERR_INVALID_ARGUMENT, "schema channel 1 (Padding): padding size 65 is outside 1..64");
    /* A weight below zero on a channel is named as the channel's. */
    c = pos;
    c.weight = -1.0f;
    expect_channel_error(&s, &c, PM_ERR_INVALID_ARGUMENT, "field 'weight' must be finite and >= 0");
    PM_ASSERT_OK(pm_schema_validate(&s, NULL));
    /* A role picks one of 16 characters (0..15): 15 must stay usable, 16 and -1 name none. */
    c = pos;
    c.role = 16;
    expect_channel_error(&s, &c, PM_ERR_INVALID_ARGUMENT, "schema channel 1 (Position Hips): role 16 is outside 0..15");
    c.role = -1;
    expect_channel_error(&s, &c, PM_ERR_INVALID_ARGUMENT, "role -1 is outside 0..15");
    /* A trajectory sample that asks for nothing would add no value yet count as a sample. */
    c = pm_default_channel_def(PM_FEATURE_TRAJECTORY);
    c.sample_count = 2;
    c.samples[0].flags = PM_TRAJ_POSITION_XY;
    c.samples[1].flags = 0;
    expect_channel_error(&s, &c, PM_ERR_INVALID_ARGUMENT, "schema channel 1 (Trajectory) sample 1: flags 0x0 are not valid");
    c = pos;
    c.role = 15;
    assert_int_equal(pm_schema_add(&s, &c, NULL), 1);
}

/* The schema-wide limits: PM_MAX_CHANNELS channels and PM_MAX_CARDINALITY values, and NULL
 * arguments to pm_schema_add. */
static void test_schema_limits(void **state) {
    (void)state;
    static pm_schema s;
    pm_schema_init(&s);
    pm_error err;
    pm_channel_def pad = pm_default_channel_def(PM_FEATURE_PADDING);
    pad.size = 64;
    pm_channel_def curve = pm_default_channel_def(PM_FEATURE_CURVE);
    strcpy(curve.curve, "c");
    /* 1024 values are fine (one curve and 1023 of padding)... */
    assert_int_equal(pm_schema_add(&s, &curve, &err), 0);
    for (int i = 0; i < 15; i++) assert_int_equal(pm_schema_add(&s, &pad, &err), i + 1);
    pad.size = 63;
    assert_int_equal(pm_schema_add(&s, &pad, &err), 16);
    assert_int_equal(pm_schema_cardinality(&s), PM_MAX_CARDINALITY);
    PM_ASSERT_OK(pm_schema_validate(&s, &err));
    /* ... one more is not: pm_schema_add names the channel, and validation catches a schema
     * whose channels were written directly. */
    pad.size = 1;
    assert_int_equal(pm_schema_add(&s, &pad, &err), -1);
    assert_int_equal(err.code, PM_ERR_LIMIT);
    assert_string_equal(err.message, "schema channel 17 (Padding): 1 more value would bring the cardinality to 1025, over 1024");
    assert_int_equal(s.channel_count, 17);
    s.channels[s.channel_count++] = pad;
    assert_int_equal(pm_schema_validate(&s, &err), PM_ERR_LIMIT);
    assert_string_equal(err.message, "schema: cardinality 1025 exceeds 1024");
    /* Channels up to PM_MAX_CHANNELS, then the schema is full. */
    pm_channel_def group = pm_default_channel_def(PM_FEATURE_GROUP);
    while (s.channel_count < PM_MAX_CHANNELS) assert_true(pm_schema_add(&s, &group, &err) >= 0);
    assert_int_equal(pm_schema_add(&s, &group, &err), -1);
    assert_int_equal(err.code, PM_ERR_LIMIT);
    assert_string_equal(err.message, "schema: more than 128 channels");
    assert_int_equal(s.channel_count, PM_MAX_CHANNELS);
    assert_int_equal(pm_schema_add(NULL, &group, &err), -1);
    assert_string_equal(err.message, "pm_schema_add: NULL argument");
    memset(&err, 0, sizeof err);
    assert_int_equal(pm_schema_add(&s, NULL, &err), -1);
    assert_int_equal(err.code, PM_ERR_INVALID_ARGUMENT);
    /* A negative count (a schema never initialised) is refused, not a write before channels[0]. */
    s.channel_count = -1;
    assert_int_equal(pm_schema_add(&s, &group, &err), -1);
    assert_int_equal(err.code, PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_schema_add: the schema's channel_count is -1 (pm_schema_init it first)");
}

/* A schema filled to exactly PM_MAX_CHANNELS is still a schema (the bound is inclusive), and a
 * channel may not be its own parent: a Group that names itself would pass a "parent is a Group"
 * check and then make every walk up the parents (weights, group names, the layout) endless. */
static void test_full_schema_and_self_parent(void **state) {
    (void)state;
    static pm_schema s;
    pm_schema_init(&s);
    pm_error err;
    pm_channel_def curve = pm_default_channel_def(PM_FEATURE_CURVE);
    strcpy(curve.curve, "c");
    assert_int_equal(pm_schema_add(&s, &curve, &err), 0);
    pm_channel_def group = pm_default_channel_def(PM_FEATURE_GROUP);
    group.parent = 1; /* channel 1 names itself */
    assert_int_equal(pm_schema_add(&s, &group, &err), -1);
    assert_non_null(strstr(err.message, "schema channel 1 (Group): parent 1 must be an earlier channel"));
    s.channels[s.channel_count++] = group;
    assert_int_equal(pm_schema_validate(&s, &err), PM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "parent 1 must be an earlier channel"));
    s.channel_count = 1;
    group.parent = -1;
    while (s.channel_count < PM_MAX_CHANNELS) assert_true(pm_schema_add(&s, &group, &err) >= 0);
    assert_int_equal(pm_schema_cardinality(&s), 1);
    PM_ASSERT_OK(pm_schema_validate(&s, &err));
    pm_schema_layout l;
    PM_ASSERT_OK(pm_schema_layout_compute(&l, &s, &err));
    assert_int_equal(l.cardinality, 1);
}

/* Padding sizes are unchecked until validation: a sum that would overflow an int, or a negative
 * size, is -1 rather than an overflow or a negative cardinality. */
static void test_cardinality_of_unchecked_sizes(void **state) {
    (void)state;
    static pm_schema s;
    pm_schema_init(&s);
    pm_channel_def pad = pm_default_channel_def(PM_FEATURE_PADDING);
    pad.size = 1000;
    s.channels[s.channel_count++] = pad;
    pad.size = INT_MAX - 500;
    s.channels[s.channel_count++] = pad;
    assert_int_equal(pm_schema_cardinality(&s), -1);
    s.channels[1].size = INT_MIN;
    assert_int_equal(pm_schema_cardinality(&s), -1);
    s.channels[1].size = 24;
    assert_int_equal(pm_schema_cardinality(&s), 1024);
    pm_error err;
    s.channels[0].size = 64;
    s.channels[1].size = INT_MAX;
    assert_int_equal(pm_schema_validate(&s, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "schema channel 1 (Padding): padding size 2147483647 is outside 1..64");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_presets),
        cmocka_unit_test(test_time_window_errors),
        cmocka_unit_test(test_time_window_of_channels),
        cmocka_unit_test(test_validation),
        cmocka_unit_test(test_layout_groups),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_json_fields),
        cmocka_unit_test(test_null_arguments),
        cmocka_unit_test(test_channel_field_errors),
        cmocka_unit_test(test_schema_limits),
        cmocka_unit_test(test_cardinality_of_unchecked_sizes),
        cmocka_unit_test(test_full_schema_and_self_parent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
