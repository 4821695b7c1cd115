#include "pca.h"

#include <math.h>
#include <string.h>

#include "core.h"
#include "parallel.h"

void pm_symmetric_eigen(double *a, int n, double *values, double *vectors) {
    if (n < 1 || n > PM_MAX_DIMS_FOR_EIGEN) return; /* callers never exceed the limit (schema cardinality) */
    /* v accumulates the rotations as columns; copied out as rows at the end. */
    double *v = vectors;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) v[i * n + j] = i == j ? 1.0 : 0.0;
    double scale = 0.0;
    for (int i = 0; i < n * n; i++) scale += a[i] * a[i];
    for (int sweep = 0; sweep < 100; sweep++) {
        double off = 0.0;
        for (int p = 0; p < n; p++)
            for (int q = p + 1; q < n; q++) off += a[p * n + q] * a[p * n + q];
        if (off <= 1e-30 * scale || off == 0.0) break;
        for (int p = 0; p < n; p++)
            for (int q = p + 1; q < n; q++) {
                double apq = a[p * n + q];
                if (fabs(apq) < 1e-300) continue;
                double theta = (a[q * n + q] - a[p * n + p]) / (2.0 * apq);
                double t = (theta >= 0.0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
                double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
                for (int k = 0; k < n; k++) { /* A <- A J */
                    double akp = a[k * n + p], akq = a[k * n + q];
                    a[k * n + p] = c * akp - s * akq;
                    a[k * n + q] = s * akp + c * akq;
                }
                for (int k = 0; k < n; k++) { /* A <- J^T A */
                    double apk = a[p * n + k], aqk = a[q * n + k];
                    a[p * n + k] = c * apk - s * aqk;
                    a[q * n + k] = s * apk + c * aqk;
                }
                a[p * n + q] = a[q * n + p] = 0.0;
                for (int k = 0; k < n; k++) { /* V <- V J */
                    double vkp = v[k * n + p], vkq = v[k * n + q];
                    v[k * n + p] = c * vkp - s * vkq;
                    v[k * n + q] = s * vkp + c * vkq;
                }
            }
    }
    /* Order by eigenvalue, descending; selection sort keeps equal values in index order. */
    int ord[PM_MAX_DIMS_FOR_EIGEN];
    double diag_buf[PM_MAX_DIMS_FOR_EIGEN];
    for (int i = 0; i < n; i++) {
        ord[i] = i;
        diag_buf[i] = a[i * n + i];
    }
    for (int i = 0; i < n; i++) {
        int best = i;
        for (int j = i + 1; j < n; j++)
            if (diag_buf[ord[j]] > diag_buf[ord[best]]) best = j;
        int tmp = ord[i];
        ord[i] = ord[best];
        ord[best] = tmp;
    }
    /* Rows of the output are eigenvectors: copy columns of v through a temporary in `a`. */
    for (int i = 0; i < n; i++) {
        values[i] = diag_buf[ord[i]];
        int col = ord[i];
        int arg = 0;
        for (int k = 0; k < n; k++)
            if (fabs(v[k * n + col]) > fabs(v[arg * n + col])) arg = k;
        double sign = v[arg * n + col] < 0.0 ? -1.0 : 1.0;
        for (int k = 0; k < n; k++) a[i * n + k] = sign * v[k * n + col];
    }
    memcpy(vectors, a, (size_t)n * n * sizeof(double));
}

typedef struct cov_ctx {
    const float *rows;
    size_t count, stride, block;
    int dims;
    const float *scale;
    const double *mean;
    double *partial; /* per block: dims (sums) or dims*dims (products) */
    int pass;
} cov_ctx;

#define PM_COV_BLOCK 4096

static void cov_task(void *context, int task) {
    cov_ctx *c = (cov_ctx *)context;
    int d = c->dims;
    size_t begin = (size_t)task * c->block, end = PM_MIN(begin + c->block, c->count);
    double y[PM_MAX_DIMS_FOR_EIGEN];
    if (c->pass == 0) {
        double *sum = c->partial + (size_t)task * d;
        memset(sum, 0, (size_t)d * sizeof(double));
        for (size_t r = begin; r < end; r++) {
            const float *row = c->rows + r * c->stride;
            for (int i = 0; i < d; i++) sum[i] += (double)row[i] * (c->scale ? c->scale[i] : 1.0f);
        }
        return;
    }
    double *acc = c->partial + (size_t)task * d * d;
    memset(acc, 0, (size_t)d * d * sizeof(double));
    for (size_t r = begin; r < end; r++) {
        const float *row = c->rows + r * c->stride;
        for (int i = 0; i < d; i++) y[i] = (double)(row[i] * (c->scale ? c->scale[i] : 1.0f)) - c->mean[i];
        for (int i = 0; i < d; i++) {
            double yi = y[i];
            double *ai = acc + (size_t)i * d;
            for (int j = i; j < d; j++) ai[j] += yi * y[j];
        }
    }
}

pm_result pm_covariance(double *mean, double *cov, const float *rows, size_t count, int dims, size_t stride,
                        const float *scale, int threads, const pm_allocator *allocator, pm_error *error) {
    if (dims < 1 || dims > PM_MAX_DIMS_FOR_EIGEN)
        return pm_fail(error, PM_ERR_LIMIT, "pca: %d dimensions (1..%d)", dims, PM_MAX_DIMS_FOR_EIGEN);
    memset(mean, 0, (size_t)dims * sizeof(double));
    memset(cov, 0, (size_t)dims * dims * sizeof(double));
    if (count == 0) return PM_OK;
    /* Block size depends on the row count only (never on threads), and keeps the partial
     * products to at most 32 matrices for wide schemas. */
    size_t block = PM_MAX((size_t)PM_COV_BLOCK, (count + 31) / 32);
    int blocks = (int)((count + block - 1) / block);
    double *partial = (double *)pm_alloc_array(allocator, (size_t)blocks * dims * dims, sizeof(double), 64);
    if (!partial) return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "pca: out of memory");
    cov_ctx c = {rows, count, stride, block, dims, scale, mean, partial, 0};
    pm_parallel_for(blocks, threads, cov_task, &c);
    for (int b = 0; b < blocks; b++)
        for (int i = 0; i < dims; i++) mean[i] += partial[(size_t)b * dims + i];
    for (int i = 0; i < dims; i++) mean[i] /= (double)count;
    c.pass = 1;
    pm_parallel_for(blocks, threads, cov_task, &c);
    for (int b = 0; b < blocks; b++) {
        const double *p = partial + (size_t)b * dims * dims;
        for (int i = 0; i < dims; i++)
            for (int j = i; j < dims; j++) cov[i * dims + j] += p[i * dims + j];
    }
    for (int i = 0; i < dims; i++)
        for (int j = i; j < dims; j++) {
            cov[i * dims + j] /= (double)count;
            cov[j * dims + i] = cov[i * dims + j];
        }
    pm_free(allocator, partial);
    return PM_OK;
}

void pm_pca_project(double *out, int count, const float *row, const float *wsqrt, const float *mean, const float *basis,
                    int dims, double *y) {
    for (int d = 0; d < dims; d++) y[d] = (double)(row[d] * wsqrt[d]) - mean[d];
    /* Four components at a time: each still sums its products in dimension order (the same bits
     * as one at a time), but the four chains of additions overlap instead of each waiting on
     * the latency of the one before. */
    int c = 0;
    for (; c + 4 <= count; c += 4) {
        const float *b0 = basis + (size_t)c * dims, *b1 = b0 + dims, *b2 = b1 + dims, *b3 = b2 + dims;
        double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
        for (int d = 0; d < dims; d++) {
            double yd = y[d];
            a0 += (double)b0[d] * yd;
            a1 += (double)b1[d] * yd;
            a2 += (double)b2[d] * yd;
            a3 += (double)b3[d] * yd;
        }
        out[c] = a0;
        out[c + 1] = a1;
        out[c + 2] = a2;
        out[c + 3] = a3;
    }
    for (; c < count; c++) {
        const float *b = basis + (size_t)c * dims;
        double acc = 0.0;
        for (int d = 0; d < dims; d++) acc += (double)b[d] * y[d];
        out[c] = acc;
    }
}
