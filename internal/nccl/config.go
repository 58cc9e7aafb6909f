package nccl

import (
	"math"
	"unsafe"
)

// Config is ncclConfig_t as NCCL 2.18 laid it out (the version that added splitShare, the
// last field gpuactor sets). A newer library reads the first Size bytes of the caller's
// struct over its own defaults and ignores fields newer than Version, so this layout is
// accepted by every library from 2.18 on; fields it does not have keep NCCL's defaults.
//
// On LP64 (amd64, arm64): size_t size at 0, unsigned magic at 8, unsigned version at 12,
// int blocking, cgaClusterSize, minCTAs, maxCTAs at 16, 20, 24, 28, const char* netName at
// 32, int splitShare at 40, then 4 bytes of padding: 48 bytes.
type Config struct {
	Size           uintptr
	Magic          uint32
	Version        uint32
	Blocking       int32
	CGAClusterSize int32
	MinCTAs        int32
	MaxCTAs        int32
	NetName        *byte
	SplitShare     int32
	_              int32
}

// The NCCL_CONFIG_INITIALIZER values this package uses.
const (
	configMagic   = 0xcafebeef // NCCL_API_MAGIC
	configVersion = 21800      // NCCL_VERSION(2, 18, 0): the layout of Config
	// Undef is NCCL_CONFIG_UNDEF_INT (INT_MIN): "NCCL's default" for an int field.
	Undef = math.MinInt32
)

// NewConfig is NCCL_CONFIG_INITIALIZER for Config: every field NCCL's default (Undef, or a
// nil pointer), with the size, magic and version NCCL checks.
func NewConfig() *Config {
	return &Config{
		Size:           unsafe.Sizeof(Config{}),
		Magic:          configMagic,
		Version:        configVersion,
		Blocking:       Undef,
		CGAClusterSize: Undef,
		MinCTAs:        Undef,
		MaxCTAs:        Undef,
		SplitShare:     Undef,
	}
}
