/* A stand-in for libnccl with the exports the binding calls: each records its arguments in
 * globals the test reads through dlsym, so that the argument passing (a 128-byte struct by
 * value, arguments past the sixth on the stack) is checked without a GPU. */
#include <stddef.h>
#include <string.h>

typedef struct { char internal[128]; } fakeId;
typedef struct {
  size_t size; unsigned magic, version;
  int blocking, cgaClusterSize, minCTAs, maxCTAs;
  const char* netName; int splitShare;
} fakeConfig;

fakeId gotId;
fakeConfig gotConfig;
char gotNetName[64];
long rec[16];  /* the last operation's arguments */
int groupDepth, groupCalls;

int ncclGetVersion(int* v) { *v = 22803; return 0; }
int ncclGetUniqueId(fakeId* id) { for (int i = 0; i < 128; i++) id->internal[i] = (char)(i * 7 + 3); return 0; }
int ncclCommInitRankConfig(void** comm, int nranks, fakeId id, int rank, fakeConfig* cfg) {
  gotId = id; rec[0] = nranks; rec[1] = rank;
  memcpy(&gotConfig, cfg, sizeof gotConfig);
  gotNetName[0] = 0;
  if (cfg->netName) strncpy(gotNetName, cfg->netName, sizeof gotNetName - 1);
  *comm = (void*)0x1234;
  return 7; /* ncclInProgress */
}
/* A split of color 2 is non-blocking, as NCCL's is: the new comm is written through out
 * only once the parent's async error, polled splitPolls more times, reports success. */
void** pendingOut;
int splitPolls;
int ncclCommGetAsyncError(void* comm, int* res) {
  if (pendingOut && comm == (void*)0x1234) {
    if (splitPolls-- > 0) { *res = 7; return 0; }
    __atomic_store_n(pendingOut, (void*)0x9abc, __ATOMIC_RELEASE);
    pendingOut = 0;
  }
  *res = (comm == (void*)0x1234 || comm == (void*)0x5678 || comm == (void*)0x9abc) ? 0 : 6;
  return 0;
}
int ncclCommSplit(void* comm, int color, int key, void** out, fakeConfig* cfg) {
  rec[0] = (long)comm; rec[1] = color; rec[2] = key; memcpy(&gotConfig, cfg, sizeof gotConfig);
  /* NCCL answers a non-blocking split with success (2) or in progress (3), the comm NULL until done. */
  if (color == 2 || color == 3) { *out = 0; pendingOut = out; splitPolls = 2; return color == 3 ? 7 : 0; }
  *out = color < 0 ? 0 : (void*)0x5678; return 0;
}
int ncclCommCount(void* c, int* n) { *n = 4; return 0; }
int ncclCommCuDevice(void* c, int* d) { *d = 1; return 0; }
int ncclCommUserRank(void* c, int* r) { *r = 2; return 0; }
int ncclCommFinalize(void* c) { rec[0] = (long)c; return 0; }
int ncclCommDestroy(void* c) { rec[0] = (long)c; return 0; }
int ncclCommAbort(void* c) { rec[0] = (long)c; return 0; }
const char* ncclGetErrorString(int r) { return r == 4 ? "invalid argument" : "other"; }
const char* ncclGetLastError(void* c) { return "fake: count is zero"; }
int ncclGroupStart(void) { groupDepth++; groupCalls++; return 0; }
int ncclGroupEnd(void) { groupDepth--; return groupDepth < 0 ? 5 : 0; }
static int op(long kind, long a, long b, long c, long d, long e, long f, long g, long h) {
  rec[0] = kind; rec[1] = a; rec[2] = b; rec[3] = c; rec[4] = d; rec[5] = e; rec[6] = f; rec[7] = g; rec[8] = h;
  rec[9] = groupDepth;
  return 0;
}
int ncclAllReduce(const void* s, void* r, size_t n, int t, int o, void* c, void* st) {
  if (n == 0) return 4;
  return op(1, (long)s, (long)r, (long)n, t, o, (long)c, (long)st, 0);
}
int ncclBroadcast(const void* s, void* r, size_t n, int t, int root, void* c, void* st) { return op(2, (long)s, (long)r, (long)n, t, root, (long)c, (long)st, 0); }
int ncclReduce(const void* s, void* r, size_t n, int t, int o, int root, void* c, void* st) { return op(3, (long)s, (long)r, (long)n, t, o, root, (long)c, (long)st); }
int ncclAllGather(const void* s, void* r, size_t n, int t, void* c, void* st) { return op(4, (long)s, (long)r, (long)n, t, (long)c, (long)st, 0, 0); }
int ncclReduceScatter(const void* s, void* r, size_t n, int t, int o, void* c, void* st) { return op(5, (long)s, (long)r, (long)n, t, o, (long)c, (long)st, 0); }
int ncclSend(const void* s, size_t n, int t, int peer, void* c, void* st) { return op(6, (long)s, (long)n, t, peer, (long)c, (long)st, 0, 0); }
int ncclRecv(void* r, size_t n, int t, int peer, void* c, void* st) { return op(7, (long)r, (long)n, t, peer, (long)c, (long)st, 0, 0); }
