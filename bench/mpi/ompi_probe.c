/* Open MPI's selection, from its internal headers (RAILKIT_OMPI_INTERNALS: found at configure
   time); every function answers -1 without them. The caller checks that the library it runs
   on is the release these headers describe (railkit_ompi_probe_release) before calling more. */
#include "bench/mpi/ompi_probe.h"

#include <stdio.h>
#include <string.h>

#if defined(OPEN_MPI) && defined(RAILKIT_OMPI_INTERNALS) && RAILKIT_OMPI_INTERNALS
#include "ompi_config.h"
#include "ompi/communicator/communicator.h"
#include "ompi/mca/bml/base/base.h"
#include "ompi/mca/bml/bml.h"
#include "ompi/mca/mtl/base/base.h"
#include "ompi/mca/pml/base/base.h"
#include "ompi/proc/proc.h"
#include "ompi/version.h"
#include "opal/mca/btl/btl.h"
#include "opal/mca/hwloc/hwloc-internal.h"
#include "opal/mca/pmix/base/base.h"
#include "opal/mca/pmix/pmix.h"

static int put(char* out, size_t size, const char* text) {
  if (text == NULL || text[0] == '\0' || size == 0) return -1;
  snprintf(out, size, "%s", text);
  return 0;
}

int railkit_ompi_probe_release(char* out, size_t size) {
  char v[32];
  snprintf(v, sizeof v, "%d.%d.%d", OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION, OMPI_RELEASE_VERSION);
  return put(out, size, v);
}

int railkit_ompi_pml(char* out, size_t size) {
  return put(out, size, mca_pml_base_selected_component.pmlm_version.mca_component_name);
}

int railkit_ompi_mtl(char* out, size_t size) {
  if (ompi_mtl_base_selected_component == NULL) return -1;
  return put(out, size, ompi_mtl_base_selected_component->mtl_version.mca_component_name);
}

int railkit_ompi_pmix(char* out, size_t size) {
  /* After selection the framework's list holds the selected component only. */
  opal_list_t* list = &opal_pmix_base_framework.framework_components;
  if (opal_list_is_empty(list)) return -1;
  const mca_base_component_list_item_t* item = (const mca_base_component_list_item_t*)opal_list_get_first(list);
  if (item->cli_component == NULL) return -1;
  const char* name = item->cli_component->mca_component_name;
  const char* version = opal_pmix.get_version != NULL ? opal_pmix.get_version() : NULL;
  char text[128];
  if (version != NULL && version[0] != '\0') snprintf(text, sizeof text, "%s %s", name, version);
  else snprintf(text, sizeof text, "%s", name);
  return put(out, size, text);
}

int railkit_ompi_peer_btls(MPI_Comm comm, int peer, char* out, size_t size, int* local) {
  if (strcmp(mca_pml_base_selected_component.pmlm_version.mca_component_name, "ob1") != 0) return -1;
  if (mca_bml.bml_add_proc == NULL || peer < 0 || peer >= ompi_comm_size(comm)) return -1;
  ompi_proc_t* proc = ompi_comm_peer_lookup(comm, peer);
  if (proc == NULL) return -1;
  *local = OPAL_PROC_ON_LOCAL_NODE(proc->super.proc_flags) ? 1 : 0;
  mca_bml_base_endpoint_t* ep = mca_bml_base_get_endpoint(proc);
  if (ep == NULL) return -1;
  char text[256] = "";
  for (size_t i = 0; i < ep->btl_send.arr_size; ++i) {
    const mca_btl_base_module_t* btl = ep->btl_send.bml_btls[i].btl;
    if (btl == NULL || btl->btl_component == NULL) continue;
    const char* name = btl->btl_component->btl_version.mca_component_name;
    if (strstr(text, name) != NULL) continue; /* several modules of one component (interfaces) */
    if (text[0] != '\0') strncat(text, ",", sizeof text - strlen(text) - 1);
    strncat(text, name, sizeof text - strlen(text) - 1);
  }
  return put(out, size, text);
}

#else

int railkit_ompi_probe_release(char* out, size_t size) { (void)out, (void)size; return -1; }
int railkit_ompi_pml(char* out, size_t size) { (void)out, (void)size; return -1; }
int railkit_ompi_mtl(char* out, size_t size) { (void)out, (void)size; return -1; }
int railkit_ompi_pmix(char* out, size_t size) { (void)out, (void)size; return -1; }
int railkit_ompi_peer_btls(MPI_Comm comm, int peer, char* out, size_t size, int* local) {
  (void)comm, (void)peer, (void)out, (void)size, (void)local;
  return -1;
}

#endif
