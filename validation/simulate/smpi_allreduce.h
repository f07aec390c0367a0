/* What allreduce_plain.c and skeleton.c share: the buffers of their MPI_Allreduce and rank 0's report of the
 * slowest rank's time. SMPI_SHARED_MALLOC gives every simulated rank the same memory (the values do not matter,
 * only the sizes the network carries). */
#include <mpi.h>
#include <stdio.h>

/* An MPI_Allreduce of BYTES bytes: BYTES / 8 doubles, the input all 1.0. */
struct allreduce_buffers {
    int count;
    double* in;
    double* out;
};

static struct allreduce_buffers allreduce_buffers_of(long bytes) {
    struct allreduce_buffers b;
    b.count = (int)(bytes / 8);
    b.in = SMPI_SHARED_MALLOC(sizeof(double) * (size_t)b.count);
    b.out = SMPI_SHARED_MALLOC(sizeof(double) * (size_t)b.count);
    for (int i = 0; i < b.count; ++i) b.in[i] = 1.0;
    return b;
}

static void allreduce_sum(const struct allreduce_buffers* b) {
    MPI_Allreduce(b->in, b->out, b->count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

/* Rank 0 prints the largest of every rank's `mine` (seconds); then the buffers are freed. */
static void report_slowest(double mine, int rank, struct allreduce_buffers* b) {
    double worst = 0;
    MPI_Reduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("%.9e\n", worst);
    SMPI_SHARED_FREE(b->in);
    SMPI_SHARED_FREE(b->out);
}
