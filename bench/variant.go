package main

import (
	"fmt"
	"strings"

	"github.com/gpuactor/gpuactor/device"
)

// A/B variants of gpuactor's tuning, run in one process between the same C++ passes
// (-waiter-query): each variant's rows carry its suffix, and are compared with the C++ row of
// the name without it.

// variantSuffix is what a row's name gets for the waiter-query setting named setting.
func variantSuffix(setting string) string { return "@waiter-query=" + setting }

// baseScenario is name without a variant's suffix.
func baseScenario(name string) string {
	if i := strings.Index(name, "@waiter-query="); i >= 0 {
		return name[:i]
	}
	return name
}

// parseWaiterQuery parses -waiter-query: a comma-separated list of on, off and default, each
// at most once.
func parseWaiterQuery(list string) ([]device.WaiterQuery, error) {
	if list == "" {
		return nil, nil
	}
	var out []device.WaiterQuery
	for _, f := range strings.Split(list, ",") {
		var w device.WaiterQuery
		switch strings.TrimSpace(f) {
		case "on":
			w = device.WaiterQueryOn
		case "off":
			w = device.WaiterQueryOff
		case "default":
			w = device.WaiterQueryDefault
		default:
			return nil, fmt.Errorf("-waiter-query: %q is not on, off or default", f)
		}
		for _, seen := range out {
			if seen == w {
				return nil, fmt.Errorf("-waiter-query: %s given twice", w)
			}
		}
		out = append(out, w)
	}
	return out, nil
}

// variants are the waiter-query settings the rows run with, in order: one zero setting
// (the library's default, no suffix) without -waiter-query.
func (o *options) variants() []device.WaiterQuery {
	if len(o.waiterQuery) == 0 {
		return []device.WaiterQuery{device.WaiterQueryDefault}
	}
	return o.waiterQuery
}

// suffixFor is the suffix of the rows run with w: none when only one setting runs.
func (o *options) suffixFor(w device.WaiterQuery) string {
	if len(o.waiterQuery) < 2 {
		return ""
	}
	return variantSuffix(w.String())
}
