/* posematch - motion matching runtime. The umbrella header: include this one. */
#ifndef POSEMATCH_H
#define POSEMATCH_H

#include "base.h"
#include "math.h"
#include "anim.h"
#include "bvh.h"

#endif
