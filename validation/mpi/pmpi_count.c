/* mpi_count: how many collective and point-to-point operations an MPI program makes, and of what size.
 * Built by validation/sweep_mpi.py with mpicc as a shared library and preloaded (LD_PRELOAD) into the program;
 * the PMPI profiling interface passes every call through. At MPI_Finalize each rank appends one JSON line to the
 * file MPI_COUNT_OUT names: {"rank": R, "calls": {"allreduce": {"BYTES": COUNT, ...}, ...}}. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { ALLREDUCE, REDUCE, BCAST, GATHER, ALLGATHER, BARRIER, SENDRECV, SEND, KINDS };
static const char* kind_name[KINDS] = {"allreduce", "reduce", "bcast", "gather", "allgather", "barrier", "sendrecv", "send"};
#define SIZES 64
static struct { long bytes; long count; } seen[KINDS][SIZES];
static long overflow[KINDS];

static void note(int kind, int count, MPI_Datatype type) {
    int size = 0;
    PMPI_Type_size(type, &size);
    long bytes = (long)count * size;
    for (int i = 0; i < SIZES; ++i) {
        if (seen[kind][i].count == 0) seen[kind][i].bytes = bytes;
        if (seen[kind][i].bytes == bytes) { ++seen[kind][i].count; return; }
    }
    ++overflow[kind];
}

int MPI_Allreduce(const void* s, void* r, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
    note(ALLREDUCE, count, type);
    return PMPI_Allreduce(s, r, count, type, op, comm);
}

int MPI_Reduce(const void* s, void* r, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
    note(REDUCE, count, type);
    return PMPI_Reduce(s, r, count, type, op, root, comm);
}

int MPI_Gather(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, int root, MPI_Comm comm) {
    note(GATHER, sc, st);
    return PMPI_Gather(sb, sc, st, rb, rc, rt, root, comm);
}

int MPI_Allgather(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm comm) {
    note(ALLGATHER, sc, st);
    return PMPI_Allgather(sb, sc, st, rb, rc, rt, comm);
}

int MPI_Barrier(MPI_Comm comm) {
    note(BARRIER, 0, MPI_BYTE);
    return PMPI_Barrier(comm);
}

int MPI_Bcast(void* b, int count, MPI_Datatype type, int root, MPI_Comm comm) {
    note(BCAST, count, type);
    return PMPI_Bcast(b, count, type, root, comm);
}

int MPI_Sendrecv(const void* sb, int sc, MPI_Datatype st, int d, int stag, void* rb, int rc, MPI_Datatype rt, int src,
                 int rtag, MPI_Comm comm, MPI_Status* status) {
    note(SENDRECV, sc, st);
    return PMPI_Sendrecv(sb, sc, st, d, stag, rb, rc, rt, src, rtag, comm, status);
}

int MPI_Send(const void* b, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    note(SEND, count, type);
    return PMPI_Send(b, count, type, dest, tag, comm);
}

int MPI_Finalize(void) {
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char* out = getenv("MPI_COUNT_OUT");
    FILE* f = out ? fopen(out, "a") : NULL;
    if (f) {
        fprintf(f, "{\"rank\": %d, \"calls\": {", rank);
        for (int k = 0; k < KINDS; ++k) {
            fprintf(f, "%s\"%s\": {", k ? ", " : "", kind_name[k]);
            int first = 1;
            for (int i = 0; i < SIZES && seen[k][i].count; ++i, first = 0)
                fprintf(f, "%s\"%ld\": %ld", first ? "" : ", ", seen[k][i].bytes, seen[k][i].count);
            fprintf(f, "}");
        }
        long lost = 0;
        for (int k = 0; k < KINDS; ++k) lost += overflow[k];
        fprintf(f, "}, \"calls_of_unrecorded_sizes\": %ld}\n", lost);
        fclose(f);
    }
    return PMPI_Finalize();
}
