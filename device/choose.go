package device

import (
	"context"
	"errors"
	"reflect"
	"strings"

	"github.com/gpuactor/gpuactor/internal/core"
)

// Choose is the ordinal of the device whose properties best match want (cudaChooseDevice,
// written over Properties). Every field of want that is not zero is a requirement: a number
// (sizes, counts, limits, clock rates, dimensions, the compute capability) is a minimum, a
// true flag must hold, a string (Name, PCIBusID, Backend) must match ignoring case, and
// ComputeMode must be equal. Ordinal is ignored. The device meeting the most requirements
// wins; among equals, the one whose compute capability is nearest want's (the highest when want
// sets none), then the lowest ordinal. Choose opens every device of the backend opts select
// to read its properties and closes them before it returns; with no device it returns the
// backend's error.
func Choose(ctx context.Context, want Properties, opts ...Option) (int, error) {
	devs, err := OpenAll(ctx, opts...)
	if err != nil {
		return 0, err
	}
	props := make([]Properties, len(devs))
	var closeErr error
	for i, d := range devs {
		props[i] = d.Properties()
		closeErr = errors.Join(closeErr, d.Close())
	}
	if closeErr != nil {
		return 0, closeErr
	}
	if len(props) == 0 {
		return 0, core.Invalid("Choose: the backend has no device")
	}
	return props[bestMatch(props, want)].Ordinal, nil
}

// bestMatch is the index in devs of the best match for want, by Choose's rules.
func bestMatch(devs []Properties, want Properties) int {
	best, bestMet, bestDist := 0, -1, 0
	for i, p := range devs {
		met := requirementsMet(p, want)
		dist := ccDistance(p.ComputeCapability, want.ComputeCapability)
		if met > bestMet || met == bestMet && dist < bestDist {
			best, bestMet, bestDist = i, met, dist
		}
	}
	return best
}

// ccDistance is how far have is from want, in tenths of a version; with want unset, lower for
// a higher capability.
func ccDistance(have, want ComputeCapability) int {
	if want == (ComputeCapability{}) {
		return -have.Arch()
	}
	d := have.Arch() - want.Arch()
	if d < 0 {
		return -d
	}
	return d
}

// requirementsMet counts the non-zero fields of want that p satisfies.
func requirementsMet(p, want Properties) int {
	pv, wv := reflect.ValueOf(p), reflect.ValueOf(want)
	met := 0
	for i := range wv.NumField() {
		name := wv.Type().Field(i).Name
		if name == "Ordinal" || wv.Field(i).IsZero() {
			continue
		}
		if name == "ComputeMode" {
			if pv.Field(i).Int() == wv.Field(i).Int() {
				met++
			}
			continue
		}
		if satisfies(pv.Field(i), wv.Field(i)) {
			met++
		}
	}
	return met
}

// satisfies reports whether have meets the requirement want: a minimum for numbers (each
// component of a dimension or an array), a flag that holds, a string equal ignoring case.
func satisfies(have, want reflect.Value) bool {
	switch want.Kind() {
	case reflect.Int, reflect.Int32, reflect.Int64:
		return have.Int() >= want.Int()
	case reflect.Uint, reflect.Uint32, reflect.Uint64:
		return have.Uint() >= want.Uint()
	case reflect.Bool:
		return have.Bool() || !want.Bool()
	case reflect.String:
		return strings.EqualFold(have.String(), want.String())
	case reflect.Array:
		for i := range want.Len() {
			if !satisfies(have.Index(i), want.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Struct:
		if cc, ok := want.Interface().(ComputeCapability); ok {
			return have.Interface().(ComputeCapability).Arch() >= cc.Arch()
		}
		for i := range want.NumField() {
			if !satisfies(have.Field(i), want.Field(i)) {
				return false
			}
		}
		return true
	}
	return false
}
