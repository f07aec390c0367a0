/* A plain MPI_Allreduce timing, independent of mmgp-mpi-bench: the reference its simulated tables are held
 * against (validation/simulate/check_tables.py): ITERS calls after a barrier, the largest per-rank mean.
 * Usage: smpirun ... allreduce_plain BYTES ITERS */
#include <mpi.h>
#include <stdlib.h>

#include "smpi_allreduce.h"

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    struct allreduce_buffers b = allreduce_buffers_of(atol(argv[1]));
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    const int iters = atoi(argv[2]);
    for (int i = 0; i < iters; ++i) allreduce_sum(&b);
    report_slowest((MPI_Wtime() - t0) / iters, rank, &b);
    MPI_Finalize();
    return 0;
}
