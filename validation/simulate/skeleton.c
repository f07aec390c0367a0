/* A multi-grain MPI skeleton for the simulated clusters: PHASES phases, each a computation of known duration
 * followed by one MPI_Allreduce of BYTES (PBPI's per-generation reduction, [C]). The computation is the whole
 * problem's WORK_S seconds per phase split over the ranks and over each rank's P threads, as the model's
 * accelerator part divides it (SMPI simulates ranks, not threads: p divides the duration). Rank 0 prints the
 * simulated wall time in seconds. Usage: smpirun ... skeleton PHASES WORK_S BYTES P */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int phases = atoi(argv[1]), p = atoi(argv[4]);
    const double work = atof(argv[2]);
    const int count = (int)(atol(argv[3]) / 8);
    double* in = SMPI_SHARED_MALLOC(sizeof(double) * (size_t)count);
    double* out = SMPI_SHARED_MALLOC(sizeof(double) * (size_t)count);
    for (int i = 0; i < count; ++i) in[i] = 1.0;
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int ph = 0; ph < phases; ++ph) {
        smpi_execute(work / ((double)size * p));
        MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    const double mine = MPI_Wtime() - t0;
    double worst = 0;
    MPI_Reduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("%.9e\n", worst);
    SMPI_SHARED_FREE(in);
    SMPI_SHARED_FREE(out);
    MPI_Finalize();
    return 0;
}
