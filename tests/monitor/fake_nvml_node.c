/* A stand-in libnvidia-ml for `railkit monitor node`: the NVML entry points the node monitor calls,
 * describing 2 GPUs with known counters. GPU0: ECC corrected 5, uncorrected 1, clock event reasons
 * 0x1; GPU1: ECC not supported (NVML_ERROR_NOT_SUPPORTED), reasons 0x40. Links 0 and 1 of each GPU
 * are active, link error counter c of link l on GPU g reads 100 g + 10 l + c. Three XID events are
 * pending at start (GPU1 XID 79 twice, GPU0 XID 48), delivered one per wait, then NVML_ERROR_TIMEOUT. */
#include <string.h>

typedef struct {
  void* device;
  unsigned long long eventType, eventData;
  unsigned int gpuInstanceId, computeInstanceId;
} nvmlEventData_t;

static int gpus[2];
static int initialized;
static int next_event;
static const struct { int gpu; unsigned long long xid; } kEvents[3] = {{1, 79}, {1, 79}, {0, 48}};

int nvmlInit_v2(void) { initialized = 1; next_event = 0; return 0; }
int nvmlShutdown(void) { initialized = 0; return 0; }
const char* nvmlErrorString(int rc) { return rc == 3 ? "Not Supported" : "Unknown Error"; }

int nvmlDeviceGetCount_v2(unsigned* n) {
  if (!initialized) return 1;
  *n = 2;
  return 0;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned i, void** dev) {
  if (!initialized || i >= 2) return 2;
  *dev = &gpus[i];
  return 0;
}

static int index_of(void* dev) { return (int*)dev - gpus; }

int nvmlDeviceGetTotalEccErrors(void* dev, int type, int counter, unsigned long long* v) {
  (void)counter;
  if (index_of(dev) != 0) return 3; /* NVML_ERROR_NOT_SUPPORTED */
  *v = type == 0 ? 5 : 1;
  return 0;
}

int nvmlDeviceGetNvLinkState(void* dev, unsigned link, int* active) {
  (void)dev;
  *active = link < 2;
  return 0;
}

int nvmlDeviceGetNvLinkErrorCounter(void* dev, unsigned link, int counter, unsigned long long* v) {
  if (link >= 2 || counter > 4) return 2;
  *v = 100ull * index_of(dev) + 10ull * link + counter;
  return 0;
}

int nvmlDeviceGetCurrentClocksEventReasons(void* dev, unsigned long long* mask) {
  *mask = index_of(dev) == 0 ? 0x1 : 0x40;
  return 0;
}

int nvmlEventSetCreate(void** set) { *set = &next_event; return 0; }
int nvmlEventSetFree(void* set) { (void)set; return 0; }
int nvmlDeviceRegisterEvents(void* dev, unsigned long long types, void* set) {
  (void)dev; (void)set;
  return (types & 0x8) ? 0 : 3;
}

int nvmlEventSetWait_v2(void* set, nvmlEventData_t* data, unsigned timeout_ms) {
  (void)set; (void)timeout_ms;
  if (next_event >= 3) return 10; /* NVML_ERROR_TIMEOUT */
  memset(data, 0, sizeof *data);
  data->device = &gpus[kEvents[next_event].gpu];
  data->eventType = 0x8;
  data->eventData = kEvents[next_event].xid;
  ++next_event;
  return 0;
}
