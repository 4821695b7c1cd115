/* posematch - feature schema (PS1-PS3): which values describe a pose, and how they are weighted
 * and normalised.
 *
 * A schema is an ordered list of channels; cardinality = the sum of their sizes. All values are
 * expressed in the character's root space at the sampled frame: +Z forward, +X left, +Y up,
 * metres and seconds. "XY" variants (UE's naming) keep the two ground-plane components
 * (x, z). Channels are kept flat; a Group channel nests the channels that name it as parent,
 * multiplies their weights and lends them its normalisation group. */
#ifndef POSEMATCH_SCHEMA_H
#define POSEMATCH_SCHEMA_H

#include "anim.h"

PM_EXTERN_C_BEGIN

#define PM_MAX_CHANNELS 128
#define PM_MAX_TRAJECTORY_SAMPLES 16
#define PM_MAX_CARDINALITY 1024
/* Largest weight of a dimension: channel, trajectory sample and enclosing group weights
 * multiplied. */
#define PM_MAX_WEIGHT 1e6f
#define PM_NAME_SIZE 64

typedef enum pm_feature_kind {
    PM_FEATURE_TRAJECTORY = 0,
    PM_FEATURE_POSITION = 1, /* a bone's position */
    PM_FEATURE_VELOCITY = 2, /* a bone's velocity */
    PM_FEATURE_HEADING = 3,  /* a local axis of a bone */
    PM_FEATURE_PHASE = 4,    /* a bone's gait phase as (cos, sin) */
    PM_FEATURE_CURVE = 5,    /* a named per-frame scalar of the clip */
    PM_FEATURE_PADDING = 6,  /* zeros, weight 0: alignment */
    PM_FEATURE_GROUP = 7     /* no values of its own */
} pm_feature_kind;

/* Trajectory flags (PS2); the values of one sample appear in this bit order. */
enum {
    PM_TRAJ_VELOCITY = 1 << 0,
    PM_TRAJ_POSITION = 1 << 1,
    PM_TRAJ_VELOCITY_DIRECTION = 1 << 2,
    PM_TRAJ_FACING_DIRECTION = 1 << 3,
    PM_TRAJ_VELOCITY_XY = 1 << 4,
    PM_TRAJ_POSITION_XY = 1 << 5,
    PM_TRAJ_VELOCITY_DIRECTION_XY = 1 << 6,
    PM_TRAJ_FACING_DIRECTION_XY = 1 << 7,
    PM_TRAJ_ALL = 0xFF
};

typedef struct pm_trajectory_sample {
    float offset;   /* seconds from the pose; negative = past */
    uint32_t flags; /* PM_TRAJ_* */
    float weight;
} pm_trajectory_sample;

typedef enum pm_components { PM_COMPONENTS_XYZ = 0, PM_COMPONENTS_XY = 1 } pm_components;

typedef struct pm_channel_def {
    pm_feature_kind kind;
    char name[PM_NAME_SIZE];  /* shown in cost breakdowns; "" = derived from kind and bone */
    char bone[PM_NAME_SIZE];  /* joint name, or a role: @hips @pelvis (= @hips) @left_foot
                                 @right_foot @left_toe @right_toe @left_upleg @right_upleg @head */
    char curve[PM_NAME_SIZE]; /* Curve: the clip curve's name */
    char group[PM_NAME_SIZE]; /* normalisation group; "" = the channel's own */
    float weight;             /* multiplies the per-sample weights */
    float offset;             /* bone channels: sample time offset in seconds */
    pm_components components; /* Position/Velocity/Heading: 3D or ground plane */
    int axis;                 /* Heading: 0 = X, 1 = Y, 2 = Z local axis of the bone */
    int size;                 /* Padding: number of floats */
    int parent;               /* index of an enclosing Group channel, -1 = top level */
    int role;                 /* which character's data (multi-character assets, to come: a
                                 database build accepts 0, the character's own, only); not a
                                 bone role like @hips */
    int sample_count;         /* Trajectory */
    pm_trajectory_sample samples[PM_MAX_TRAJECTORY_SAMPLES];
} pm_channel_def;

/* Weight 1 (0 for padding), every trajectory sample slot's weight 1 too, so that a sample given
 * only an offset and flags counts; XYZ components, Z heading axis, top level, role 0. */
PM_API pm_channel_def pm_default_channel_def(pm_feature_kind kind);

/* A plain value that copies with `=`: PM_MAX_CHANNELS channels of fixed-size names make it about
 * 62 KB. Threads with small stacks (job systems often give 64 KB) keep it in static or heap
 * storage; a pm_database_def only points at one. */
typedef struct pm_schema {
    char name[PM_NAME_SIZE]; /* preset or file name, informative */
    int channel_count;
    pm_channel_def channels[PM_MAX_CHANNELS];
} pm_schema;

/* Empty schema; add channels with pm_schema_add. Does nothing for NULL. */
PM_API void pm_schema_init(pm_schema *schema);
/* Appends a channel, returns its index (for Group parents) or -1 with the error filled. */
PM_API int pm_schema_add(pm_schema *schema, const pm_channel_def *channel, pm_error *error);
/* Checks every channel (kinds, weights finite and >= 0, offsets finite, flags, group parents,
 * cardinality within PM_MAX_CARDINALITY). */
PM_API pm_result pm_schema_validate(const pm_schema *schema, pm_error *error);
/* Values this channel contributes (0 for groups and for NULL). */
PM_API int pm_channel_size(const pm_channel_def *channel);
/* Sum of the channels' sizes; -1 for a NULL schema, a channel count outside 0..PM_MAX_CHANNELS, or a
 * padding size (unchecked before pm_schema_validate) that is negative or overflows the sum. */
PM_API int pm_schema_cardinality(const pm_schema *schema);
/* Display name of a channel: its name, or "Trajectory", "Position @left_foot", ..., cut to fit
 * `size` bytes with a NUL. Writes nothing when out is NULL or size is 0, and "" for a NULL
 * channel. */
PM_API void pm_channel_display_name(char *out, size_t size, const pm_channel_def *channel);

/* Built-in presets: "ue-locomotion" (UE's default trajectory + feet position/velocity + pelvis
 * velocity, 31 values) and "holden27" (feet positions and velocities, hip velocity, 2D
 * trajectory positions and directions at +1/3, +2/3, +1 s: 27 values). */
PM_API pm_result pm_schema_preset(pm_schema *out, const char *name, pm_error *error);
/* NULL-terminated list of preset names. */
PM_API const char *const *pm_schema_preset_names(void);

/* Longest past and future sample offsets (seconds, >= 0) any channel reads. Errors, with the
 * outputs untouched: a NULL argument, a channel count outside 0..PM_MAX_CHANNELS, a trajectory
 * sample count outside 0..PM_MAX_TRAJECTORY_SAMPLES (PM_ERR_INVALID_ARGUMENT) and an offset that
 * is not finite (PM_ERR_NUMERIC); each names the channel. The rest of the schema is not checked
 * (pm_schema_validate does). */
PM_API pm_result pm_schema_time_window(float *out_past, float *out_future, const pm_schema *schema, pm_error *error);

PM_EXTERN_C_END

#endif
