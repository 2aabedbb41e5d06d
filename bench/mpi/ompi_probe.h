#pragma once
/* What Open MPI selected, read from its own (installed, internal) headers and symbols: a C
   file, since those headers are C. Every function returns 0 and fills `out` (NUL-terminated,
   truncated to `size`) when it can tell, -1 otherwise (not Open MPI, other release, nothing
   selected). Callable between MPI_Init and MPI_Finalize. */
#include <mpi.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** "4.1.4": the Open MPI release these headers describe; -1 when built without them. */
int railkit_ompi_probe_release(char* out, size_t size);
/** The selected PML component ("ob1", "ucx", "cm"). */
int railkit_ompi_pml(char* out, size_t size);
/** The selected MTL component (with the cm PML); -1 when none is selected. */
int railkit_ompi_mtl(char* out, size_t size);
/** The selected OPAL pmix component ("ext3x", "isolated" for a singleton, ...) and, when the
    component says, the PMIx library's version after a space ("ext3x 4.2.2"). */
int railkit_ompi_pmix(char* out, size_t size);
/** With the ob1 PML: the BTL components that carry sends to `peer` of `comm`, comma-separated
    in Open MPI's order ("vader", "tcp", "self"), setting up the peer's BML endpoint as ob1's
    first send would. `*local` is 1 when Open MPI holds the peer for one on this node. */
int railkit_ompi_peer_btls(MPI_Comm comm, int peer, char* out, size_t size, int* local);

#ifdef __cplusplus
}
#endif
