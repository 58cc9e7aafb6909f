package cuda

import "fmt"

// MemSyncDomain is a memory synchronization domain (cudaLaunchMemSyncDomain): a memory fence
// of a kernel in one domain need not wait for the memory traffic of kernels in the other.
type MemSyncDomain uint8

// Memory synchronization domains.
const (
	MemSyncDomainDefault MemSyncDomain = 0 // cudaLaunchMemSyncDomainDefault
	MemSyncDomainRemote  MemSyncDomain = 1 // cudaLaunchMemSyncDomainRemote
)

// String names the domain.
func (m MemSyncDomain) String() string {
	switch m {
	case MemSyncDomainDefault:
		return "default"
	case MemSyncDomainRemote:
		return "remote"
	}
	return fmt.Sprintf("MemSyncDomain(%d)", uint8(m))
}

// ClusterSchedulingPolicy is how the blocks of a cluster are spread over the device's
// multiprocessors (cudaClusterSchedulingPolicy).
type ClusterSchedulingPolicy uint8

// Cluster scheduling policies.
const (
	ClusterSchedulingDefault       ClusterSchedulingPolicy = 0 // cudaClusterSchedulingPolicyDefault
	ClusterSchedulingSpread        ClusterSchedulingPolicy = 1 // cudaClusterSchedulingPolicySpread
	ClusterSchedulingLoadBalancing ClusterSchedulingPolicy = 2 // cudaClusterSchedulingPolicyLoadBalancing
)

// String names the policy.
func (p ClusterSchedulingPolicy) String() string {
	switch p {
	case ClusterSchedulingDefault:
		return "default"
	case ClusterSchedulingSpread:
		return "spread"
	case ClusterSchedulingLoadBalancing:
		return "load-balancing"
	}
	return fmt.Sprintf("ClusterSchedulingPolicy(%d)", uint8(p))
}

// CacheConfig is a kernel's preferred split of on-chip memory between L1 cache and shared
// memory (cudaFuncCache).
type CacheConfig uint8

// Cache configurations.
const (
	CachePreferNone   CacheConfig = 0 // cudaFuncCachePreferNone
	CachePreferShared CacheConfig = 1 // cudaFuncCachePreferShared
	CachePreferL1     CacheConfig = 2 // cudaFuncCachePreferL1
	CachePreferEqual  CacheConfig = 3 // cudaFuncCachePreferEqual
)

// String names the configuration.
func (c CacheConfig) String() string {
	switch c {
	case CachePreferNone:
		return "prefer-none"
	case CachePreferShared:
		return "prefer-shared"
	case CachePreferL1:
		return "prefer-L1"
	case CachePreferEqual:
		return "prefer-equal"
	}
	return fmt.Sprintf("CacheConfig(%d)", uint8(c))
}

// KernelAttributes are a kernel's attributes as the runtime reports them
// (cudaFuncAttributes).
type KernelAttributes struct {
	SharedSizeBytes    uint64 // static shared memory per block
	ConstSizeBytes     uint64 // constant memory
	LocalSizeBytes     uint64 // local memory per thread
	MaxThreadsPerBlock int    // the most threads a block of this kernel may have
	NumRegs            int    // registers per thread
	PTXVersion         int    // PTX virtual architecture, major×10+minor (90 for compute_90)
	BinaryVersion      int    // binary architecture, major×10+minor (90 for sm_90)
	CacheModeCA        bool   // compiled with -Xptxas --dlcm=ca
	// MaxDynamicSharedSizeBytes is the most dynamic shared memory a launch may ask for.
	MaxDynamicSharedSizeBytes int
	// PreferredSharedCarveout is the preferred shared memory share of the unified L1/shared
	// memory, in percent, or -1 for no preference.
	PreferredSharedCarveout int
	// ClusterDimMustBeSet: the kernel was compiled with a required cluster shape
	// (__cluster_dims__), RequiredCluster.
	ClusterDimMustBeSet bool
	RequiredCluster     Dim3
	// ClusterScheduling is the kernel's cluster scheduling policy preference.
	ClusterScheduling ClusterSchedulingPolicy
	// NonPortableClusterSizeAllowed: launches may use clusters above the portable 8 blocks.
	NonPortableClusterSizeAllowed bool
}
