package cudart

// Symbol slots of libnvrtc (the core set is unchanged from 11.x to 13.0).
const (
	nvGetErrorString = iota
	nvVersion
	nvGetNumSupportedArchs
	nvGetSupportedArchs
	nvCreateProgram
	nvDestroyProgram
	nvCompileProgram
	nvGetPTXSize
	nvGetPTX
	nvGetCUBINSize
	nvGetCUBIN
	nvGetProgramLogSize
	nvGetProgramLog
	numNVRTCSyms
)

var nvrtcSymNames = [numNVRTCSyms]string{
	nvGetErrorString:       "nvrtcGetErrorString",
	nvVersion:              "nvrtcVersion",
	nvGetNumSupportedArchs: "nvrtcGetNumSupportedArchs",
	nvGetSupportedArchs:    "nvrtcGetSupportedArchs",
	nvCreateProgram:        "nvrtcCreateProgram",
	nvDestroyProgram:       "nvrtcDestroyProgram",
	nvCompileProgram:       "nvrtcCompileProgram",
	nvGetPTXSize:           "nvrtcGetPTXSize",
	nvGetPTX:               "nvrtcGetPTX",
	nvGetCUBINSize:         "nvrtcGetCUBINSize",
	nvGetCUBIN:             "nvrtcGetCUBIN",
	nvGetProgramLogSize:    "nvrtcGetProgramLogSize",
	nvGetProgramLog:        "nvrtcGetProgramLog",
}
