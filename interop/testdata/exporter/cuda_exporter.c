/* cuda_exporter: allocates device memory with the CUDA driver API (cuMemCreate, exportable as a
 * POSIX file descriptor), fills it, exports it with cuMemExportToShareableHandle and hands the
 * descriptor to the Go test over the Unix socket argv[1] (protocol: common.h). It needs only
 * the driver (libcuda.so.1) and cuda.h to build:
 *   cc -O2 -I$CUDA_HOME/include cuda_exporter.c -o cuda_exporter -lcuda  (stubs dir: -L.../stubs)
 * Usage: cuda_exporter SOCKET [MiB] */
#include <cuda.h>
#include <stdlib.h>

#include "common.h"

#define CHECK(call)                                                          \
    do {                                                                     \
        CUresult r_ = (call);                                                \
        if (r_ != CUDA_SUCCESS) {                                            \
            const char *n_ = "?";                                            \
            cuGetErrorName(r_, &n_);                                         \
            fprintf(stderr, "cuda_exporter: %s: %s (%d)\n", #call, n_, r_); \
            return 2;                                                        \
        }                                                                    \
    } while (0)

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: cuda_exporter SOCKET [MiB]\n"); return 2; }
    size_t want = (argc > 2 ? (size_t)atoi(argv[2]) : 4) << 20;

    CUdevice dev;
    CUcontext ctx;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));

    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    size_t gran = 0;
    CHECK(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    size_t size = (want + gran - 1) / gran * gran;

    CUmemGenericAllocationHandle h;
    CHECK(cuMemCreate(&h, size, &prop, 0));
    CUdeviceptr p;
    CHECK(cuMemAddressReserve(&p, size, gran, 0, 0));
    CHECK(cuMemMap(p, size, 0, h, 0));
    CUmemAccessDesc acc;
    memset(&acc, 0, sizeof acc);
    acc.location = prop.location;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CHECK(cuMemSetAccess(p, size, &acc, 1));

    uint64_t words = size / 4;
    uint32_t *host = malloc(size);
    if (!host) { fprintf(stderr, "cuda_exporter: out of memory\n"); return 2; }
    fill(host, words);
    CHECK(cuMemcpyHtoD(p, host, size));
    CHECK(cuCtxSynchronize());

    int fd = -1;
    CHECK(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));

    int s = connect_test(argv[1]);
    if (s < 0) return 2;
    char line[96];
    snprintf(line, sizeof line, "cuda %zu %llu\n", size, (unsigned long long)words);
    if (send_fds(s, line, &fd, 1) < 0) return 2;
    close(fd); /* the test holds its own copy now */

    if (await_go(s) < 0) return 2;
    memset(host, 0, size);
    CHECK(cuMemcpyDtoH(host, p, size));
    int rc = verify(s, host, words);

    CHECK(cuMemUnmap(p, size));
    CHECK(cuMemAddressFree(p, size));
    CHECK(cuMemRelease(h));
    CHECK(cuDevicePrimaryCtxRelease(dev));
    free(host);
    close(s);
    return rc;
}
