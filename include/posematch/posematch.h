/* posematch - motion matching runtime. The umbrella header: include this one. */
#ifndef POSEMATCH_H
#define POSEMATCH_H

#include "base.h"
#include "file.h"
#include "math_functions.h"
#include "anim.h"
#include "bvh.h"
#include "blend.h"
#include "blend_space.h"
#include "schema.h"
#include "features.h"
#include "database.h"
#include "search.h"

#endif
