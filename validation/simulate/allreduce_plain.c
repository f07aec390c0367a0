/* A plain MPI_Allreduce timing, independent of mmgp-mpi-bench: the reference its simulated tables are held
 * against (validation/simulate/check_tables.py): ITERS calls after a barrier, the largest per-rank mean.
 * Usage: smpirun ... allreduce_plain BYTES ITERS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, count = (int)(atol(argv[1]) / 8);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double* in = SMPI_SHARED_MALLOC(sizeof(double) * (size_t)count);
    double* out = SMPI_SHARED_MALLOC(sizeof(double) * (size_t)count);
    for (int i = 0; i < count; ++i) in[i] = 1.0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    const int iters = atoi(argv[2]);
    for (int i = 0; i < iters; ++i) MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double mine = (MPI_Wtime() - t0) / iters, worst = 0;
    MPI_Reduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("%.9e\n", worst);
    SMPI_SHARED_FREE(in);
    SMPI_SHARED_FREE(out);
    MPI_Finalize();
    return 0;
}
