/* Principal component analysis with a deterministic symmetric eigen-solver. */
#ifndef PM_PCA_H
#define PM_PCA_H

#include <stddef.h>

#include "posematch/base.h"
#include "posematch/schema.h"

/* Eigen and covariance work on at most the largest schema cardinality. */
#define PM_MAX_DIMS_FOR_EIGEN PM_MAX_CARDINALITY

/* Eigen-decomposition of the symmetric n x n matrix `a` (row-major, destroyed) by cyclic
 * Jacobi rotations. Eigenvalues descending in out_values; eigenvector i is row i of
 * out_vectors (n x n), with its largest-magnitude component positive. Deterministic: fixed
 * sweep order, ties in eigenvalues kept in index order. */
void pm_symmetric_eigen(double *a, int n, double *out_values, double *out_vectors);

/* Mean and covariance (divided by the row count) of `count` rows of `dims` floats starting
 * `stride` floats apart, each multiplied element-wise by `scale` (NULL = 1) first. Summed in
 * fixed 4096-row blocks merged in order, so the result is the same for any thread count. */
pm_result pm_covariance(double *out_mean, double *out_cov, const float *rows, size_t count, int dims, size_t stride,
                        const float *scale, int threads, const pm_allocator *allocator, pm_error *error);

/* The first `count` PCA coordinates of a normalised row: out[c] = basis row c . (row * wsqrt -
 * mean), summed in double (y: `dims` doubles of scratch). The builder stores data this way and
 * the search projects queries this way: one computation, so the two always round alike. */
void pm_pca_project(double *out, int count, const float *row, const float *wsqrt, const float *mean, const float *basis,
                    int dims, double *y);

#endif
