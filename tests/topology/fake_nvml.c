/* A stand-in libnvidia-ml for the NVLink test: the handful of NVML entry points the probe calls,
 * describing the DGX-like fixture's 8 GPUs. Links 0-15 of each GPU go to NVSwitches (bus ids
 * that are not GPUs); links 16-17 go directly to the neighbour GPU (index ^ 1). */
#include <stdio.h>
#include <string.h>
#include <strings.h>

typedef struct {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;

static const char* kGpus[8] = {"0000:1b:00.0", "0000:43:00.0", "0000:52:00.0", "0000:61:00.0",
                               "0000:9d:00.0", "0000:c3:00.0", "0000:d1:00.0", "0000:df:00.0"};
static int initialized;

int nvmlInit_v2(void) { initialized = 1; return 0; }
int nvmlShutdown(void) { initialized = 0; return 0; }

int nvmlDeviceGetHandleByPciBusId_v2(const char* busId, void** device) {
  size_t n = strlen(busId);
  if (!initialized || n < 12) return 1;
  for (int i = 0; i < 8; ++i)
    if (strcasecmp(busId + n - 12, kGpus[i]) == 0) {
      *device = (void*)(kGpus + i);
      return 0;
    }
  return 6; /* NVML_ERROR_NOT_FOUND */
}

int nvmlDeviceGetNvLinkState(void* device, unsigned int link, int* isActive) {
  (void)device;
  *isActive = link < 18;
  return 0;
}

int nvmlDeviceGetNvLinkRemotePciInfo_v2(void* device, unsigned int link, nvmlPciInfo_t* pci) {
  int idx = (int)((const char**)device - kGpus);
  memset(pci, 0, sizeof *pci);
  if (link >= 16) {
    /* NVML writes 8-digit domains and upper-case hex */
    unsigned bus = 0;
    sscanf(kGpus[idx ^ 1] + 5, "%x", &bus);
    snprintf(pci->busId, sizeof pci->busId, "00000000:%02X:00.0", bus);
  } else {
    snprintf(pci->busId, sizeof pci->busId, "00000000:%02X:00.0", 0xe0 + link % 4); /* 4 NVSwitches */
  }
  return 0;
}
