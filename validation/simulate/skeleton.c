/* A multi-grain MPI skeleton for the simulated clusters: PHASES phases, each a computation of known duration
 * followed by one MPI_Allreduce of BYTES (PBPI's per-generation reduction, [C]). The computation is the whole
 * problem's WORK_S seconds per phase split over the ranks and over each rank's P threads, as the model's
 * accelerator part divides it (SMPI simulates ranks, not threads: p divides the duration). Rank 0 prints the
 * simulated wall time in seconds. Usage: smpirun ... skeleton PHASES WORK_S BYTES P */
#include <mpi.h>
#include <stdlib.h>

#include "smpi_allreduce.h"

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int phases = atoi(argv[1]), p = atoi(argv[4]);
    const double work = atof(argv[2]);
    struct allreduce_buffers b = allreduce_buffers_of(atol(argv[3]));
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int ph = 0; ph < phases; ++ph) {
        smpi_execute(work / ((double)size * p));
        allreduce_sum(&b);
    }
    report_slowest(MPI_Wtime() - t0, rank, &b);
    MPI_Finalize();
    return 0;
}
