/* vk_exporter: headless Vulkan on the GPU CUDA calls device 0 (matched by UUID through the
 * driver API). It allocates exportable device-local memory (VK_KHR_external_memory_fd) and a
 * timeline semaphore exportable as an opaque fd (VK_KHR_external_semaphore_fd), uploads the
 * pattern word i = i*3+1 through a staging buffer in a submit that signals the semaphore to 1,
 * hands both descriptors to the Go test over the Unix socket argv[1] (protocol: common.h),
 * then queues a download that waits on the GPU for the semaphore to reach 2 (the test's
 * CUDA signal) and checks the words the test wrote (i*5+2).
 * Build: cc -O2 -I<vulkan include> -I$CUDA_HOME/include vk_exporter.c -o vk_exporter \
 *          -L<libvulkan dir> -lvulkan -lcuda
 * Usage: vk_exporter SOCKET [MiB]    vk_exporter --probe (exit 0 when a Vulkan device matches) */
#include <cuda.h>
#include <stdlib.h>
#include <vulkan/vulkan.h>

#include "common.h"

#define VK(call)                                                            \
    do {                                                                    \
        VkResult r_ = (call);                                               \
        if (r_ != VK_SUCCESS) {                                             \
            fprintf(stderr, "vk_exporter: %s: VkResult %d\n", #call, r_);   \
            return 2;                                                       \
        }                                                                   \
    } while (0)

static VkDevice dev;
static VkPhysicalDevice phys;

static int memory_type(uint32_t bits, VkMemoryPropertyFlags want) {
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(phys, &mp);
    for (uint32_t i = 0; i < mp.memoryTypeCount; i++)
        if ((bits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want) return (int)i;
    return -1;
}

/* make_buffer creates a buffer and its memory; export: exportable as an opaque fd. */
static int make_buffer(VkDeviceSize size, VkMemoryPropertyFlags props, int export, VkBuffer *buf,
                       VkDeviceMemory *mem, VkDeviceSize *alloc_size, int *dedicated) {
    VkExternalMemoryBufferCreateInfo ext = {VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO, NULL,
                                            VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkBufferCreateInfo bi = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.pNext = export ? &ext : NULL;
    bi.size = size;
    bi.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VK(vkCreateBuffer(dev, &bi, NULL, buf));

    VkMemoryDedicatedRequirements dr = {VK_STRUCTURE_TYPE_MEMORY_DEDICATED_REQUIREMENTS};
    VkMemoryRequirements2 req = {VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2, &dr};
    VkBufferMemoryRequirementsInfo2 ri = {VK_STRUCTURE_TYPE_BUFFER_MEMORY_REQUIREMENTS_INFO_2, NULL, *buf};
    vkGetBufferMemoryRequirements2(dev, &ri, &req);
    int type = memory_type(req.memoryRequirements.memoryTypeBits, props);
    if (type < 0) { fprintf(stderr, "vk_exporter: no memory type with flags %#x\n", props); return 2; }

    VkMemoryDedicatedAllocateInfo ded = {VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO, NULL, VK_NULL_HANDLE, *buf};
    VkExportMemoryAllocateInfo exp = {VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO, NULL,
                                      VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    *dedicated = export && (dr.requiresDedicatedAllocation || dr.prefersDedicatedAllocation);
    if (*dedicated) exp.pNext = &ded;
    VkMemoryAllocateInfo ai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, export ? &exp : NULL,
                               req.memoryRequirements.size, (uint32_t)type};
    VK(vkAllocateMemory(dev, &ai, NULL, mem));
    VK(vkBindBufferMemory(dev, *buf, *mem, 0));
    *alloc_size = req.memoryRequirements.size;
    return 0;
}

/* pick chooses the Vulkan device whose UUID is CUDA device 0's. */
static int pick(VkInstance inst) {
    CUuuid uuid;
    CUdevice cd;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&cd, 0) != CUDA_SUCCESS || cuDeviceGetUuid(&uuid, cd) != CUDA_SUCCESS) {
        fprintf(stderr, "vk_exporter: no CUDA device 0 to match\n");
        return 2;
    }
    uint32_t n = 0;
    VK(vkEnumeratePhysicalDevices(inst, &n, NULL));
    VkPhysicalDevice *all = calloc(n ? n : 1, sizeof *all);
    VK(vkEnumeratePhysicalDevices(inst, &n, all));
    for (uint32_t i = 0; i < n; i++) {
        VkPhysicalDeviceIDProperties id = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
        VkPhysicalDeviceProperties2 p = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &id};
        vkGetPhysicalDeviceProperties2(all[i], &p);
        if (memcmp(id.deviceUUID, uuid.bytes, VK_UUID_SIZE) == 0) {
            phys = all[i];
            fprintf(stderr, "vk_exporter: %s (Vulkan %u.%u)\n", p.properties.deviceName,
                    VK_API_VERSION_MAJOR(p.properties.apiVersion), VK_API_VERSION_MINOR(p.properties.apiVersion));
            free(all);
            return 0;
        }
    }
    fprintf(stderr, "vk_exporter: none of %u Vulkan devices is CUDA device 0\n", n);
    free(all);
    return 2;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: vk_exporter SOCKET [MiB] | --probe\n"); return 2; }
    int probe = strcmp(argv[1], "--probe") == 0;
    VkDeviceSize size = (VkDeviceSize)(argc > 2 ? atoi(argv[2]) : 4) << 20;
    uint64_t words = size / 4;

    VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "gpuactor vk_exporter";
    app.apiVersion = VK_API_VERSION_1_2;
    VkInstanceCreateInfo ici = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pApplicationInfo = &app;
    VkInstance inst;
    VK(vkCreateInstance(&ici, NULL, &inst));
    if (pick(inst)) return 2;

    uint32_t nq = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(phys, &nq, NULL);
    VkQueueFamilyProperties *qf = calloc(nq ? nq : 1, sizeof *qf);
    vkGetPhysicalDeviceQueueFamilyProperties(phys, &nq, qf);
    uint32_t family = UINT32_MAX;
    for (uint32_t i = 0; i < nq && family == UINT32_MAX; i++)
        if (qf[i].queueFlags & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT | VK_QUEUE_TRANSFER_BIT)) family = i;
    free(qf);
    if (family == UINT32_MAX) { fprintf(stderr, "vk_exporter: no transfer queue\n"); return 2; }

    float prio = 1;
    VkDeviceQueueCreateInfo qci = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, NULL, 0, family, 1, &prio};
    const char *exts[] = {VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME};
    VkPhysicalDeviceVulkan12Features f12 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    f12.timelineSemaphore = VK_TRUE;
    VkDeviceCreateInfo dci = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &f12};
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    dci.enabledExtensionCount = 2;
    dci.ppEnabledExtensionNames = exts;
    VK(vkCreateDevice(phys, &dci, NULL, &dev));
    if (probe) { vkDestroyDevice(dev, NULL); vkDestroyInstance(inst, NULL); return 0; }
    VkQueue q;
    vkGetDeviceQueue(dev, family, 0, &q);
    PFN_vkGetMemoryFdKHR getMemoryFd = (PFN_vkGetMemoryFdKHR)vkGetDeviceProcAddr(dev, "vkGetMemoryFdKHR");
    PFN_vkGetSemaphoreFdKHR getSemaphoreFd = (PFN_vkGetSemaphoreFdKHR)vkGetDeviceProcAddr(dev, "vkGetSemaphoreFdKHR");
    if (!getMemoryFd || !getSemaphoreFd) { fprintf(stderr, "vk_exporter: no fd export entry points\n"); return 2; }

    VkBuffer shared, staging;
    VkDeviceMemory shared_mem, staging_mem;
    VkDeviceSize shared_size, staging_size;
    int dedicated, unused;
    if (make_buffer(size, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 1, &shared, &shared_mem, &shared_size, &dedicated)) return 2;
    if (make_buffer(size, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0, &staging,
                    &staging_mem, &staging_size, &unused)) return 2;
    uint32_t *host;
    VK(vkMapMemory(dev, staging_mem, 0, size, 0, (void **)&host));
    fill(host, words);

    VkExportSemaphoreCreateInfo esi = {VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO, NULL,
                                       VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkSemaphoreTypeCreateInfo sti = {VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, &esi, VK_SEMAPHORE_TYPE_TIMELINE, 0};
    VkSemaphoreCreateInfo sci = {VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &sti};
    VkSemaphore sem;
    VK(vkCreateSemaphore(dev, &sci, NULL, &sem));

    VkCommandPoolCreateInfo pci = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, NULL, 0, family};
    VkCommandPool pool;
    VK(vkCreateCommandPool(dev, &pci, NULL, &pool));
    VkCommandBufferAllocateInfo cai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL, pool,
                                       VK_COMMAND_BUFFER_LEVEL_PRIMARY, 2};
    VkCommandBuffer cb[2];
    VK(vkAllocateCommandBuffers(dev, &cai, cb));
    VkBufferCopy region = {0, 0, size};
    VkCommandBufferBeginInfo begin = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VK(vkBeginCommandBuffer(cb[0], &begin));
    vkCmdCopyBuffer(cb[0], staging, shared, 1, &region); /* upload */
    VK(vkEndCommandBuffer(cb[0]));
    VK(vkBeginCommandBuffer(cb[1], &begin));
    vkCmdCopyBuffer(cb[1], shared, staging, 1, &region); /* download */
    VK(vkEndCommandBuffer(cb[1]));

    /* Upload, signalling 1 when the memory holds the pattern. */
    uint64_t one = 1, two = 2;
    VkTimelineSemaphoreSubmitInfo up_t = {VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    up_t.signalSemaphoreValueCount = 1;
    up_t.pSignalSemaphoreValues = &one;
    VkSubmitInfo up = {VK_STRUCTURE_TYPE_SUBMIT_INFO, &up_t};
    up.commandBufferCount = 1;
    up.pCommandBuffers = &cb[0];
    up.signalSemaphoreCount = 1;
    up.pSignalSemaphores = &sem;
    VK(vkQueueSubmit(q, 1, &up, VK_NULL_HANDLE));

    int fds[2] = {-1, -1};
    VkMemoryGetFdInfoKHR mfi = {VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR, NULL, shared_mem,
                                VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    VK(getMemoryFd(dev, &mfi, &fds[0]));
    VkSemaphoreGetFdInfoKHR sfi = {VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR, NULL, sem,
                                   VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
    VK(getSemaphoreFd(dev, &sfi, &fds[1]));

    int s = connect_test(argv[1]);
    if (s < 0) return 2;
    char line[128];
    snprintf(line, sizeof line, "vk %llu %llu %s\n", (unsigned long long)shared_size, (unsigned long long)words,
             dedicated ? "dedicated" : "shared");
    if (send_fds(s, line, fds, 2) < 0) return 2;
    close(fds[0]);
    close(fds[1]);

    /* Download once the GPU sees the test's signal (2): the queue waits on the device. */
    memset(host, 0, size);
    VkPipelineStageFlags stage = VK_PIPELINE_STAGE_TRANSFER_BIT;
    VkTimelineSemaphoreSubmitInfo down_t = {VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    down_t.waitSemaphoreValueCount = 1;
    down_t.pWaitSemaphoreValues = &two;
    VkSubmitInfo down = {VK_STRUCTURE_TYPE_SUBMIT_INFO, &down_t};
    down.waitSemaphoreCount = 1;
    down.pWaitSemaphores = &sem;
    down.pWaitDstStageMask = &stage;
    down.commandBufferCount = 1;
    down.pCommandBuffers = &cb[1];
    VkFenceCreateInfo fci = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    VK(vkCreateFence(dev, &fci, NULL, &fence));
    VK(vkQueueSubmit(q, 1, &down, fence));

    if (await_go(s) < 0) return 2;
    VK(vkWaitForFences(dev, 1, &fence, VK_TRUE, 30ull * 1000 * 1000 * 1000));
    int rc = verify(s, host, words);

    vkDestroyFence(dev, fence, NULL);
    vkDestroyCommandPool(dev, pool, NULL);
    vkDestroySemaphore(dev, sem, NULL);
    vkUnmapMemory(dev, staging_mem);
    vkDestroyBuffer(dev, staging, NULL);
    vkDestroyBuffer(dev, shared, NULL);
    vkFreeMemory(dev, staging_mem, NULL);
    vkFreeMemory(dev, shared_mem, NULL);
    vkDestroyDevice(dev, NULL);
    vkDestroyInstance(inst, NULL);
    close(s);
    return rc;
}
