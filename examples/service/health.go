package main

import (
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/group"
)

// faultLog keeps each device's last failure: the error of the device a restart replaced,
// which the new device's own state no longer shows.
type faultLog struct {
	mu   sync.Mutex
	last map[int]fault // by ordinal
}

type fault struct {
	err string
	at  time.Time
}

// note records that device failed, as the group's restart function learns it.
func (f *faultLog) note(failed *device.Device) {
	msg := "replaced after failing its health check"
	if err := failed.Err(); err != nil {
		msg = err.Error()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.last == nil {
		f.last = map[int]fault{}
	}
	f.last[failed.Ordinal()] = fault{err: msg, at: time.Now()}
}

func (f *faultLog) get(ordinal int) (fault, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ft, ok := f.last[ordinal]
	return ft, ok
}

// deviceHealth is one device of /healthz's answer.
type deviceHealth struct {
	Ordinal    int    `json:"ordinal"`
	Backend    string `json:"backend"`
	Isolated   bool   `json:"isolated"`
	Generation uint64 `json:"generation"` // restarts so far: 0 for the device the service opened
	Healthy    bool   `json:"healthy"`
	// Error is the device's failure now, or else the last one a restart recovered from.
	Error      string     `json:"error,omitempty"`
	FailedAt   *time.Time `json:"failed_at,omitempty"`
	JobsDone   uint64     `json:"jobs_done"`
	JobsFailed uint64     `json:"jobs_failed"`
}

// health is /healthz's answer.
type health struct {
	Healthy int            `json:"healthy"` // devices taking work
	Waiting int64          `json:"waiting"` // jobs waiting for any device
	Devices []deviceHealth `json:"devices"`
}

// healthOf reads the group's health from st; the status is 503 when no device takes work.
func healthOf(st group.Stats, faults *faultLog) (health, int) {
	h := health{Waiting: st.Waiting, Devices: make([]deviceHealth, 0, len(st.Devices))}
	for _, d := range st.Devices {
		dh := deviceHealth{Ordinal: d.Device.Ordinal, Backend: string(d.Device.Backend), Isolated: d.Device.Isolated,
			Generation: d.Restarts, Healthy: d.Healthy, Error: d.Device.Failure, JobsDone: d.Done, JobsFailed: d.Failed}
		if dh.Error == "" && faults != nil {
			if ft, ok := faults.get(dh.Ordinal); ok {
				dh.Error, dh.FailedAt = ft.err, &ft.at
			}
		}
		if d.Healthy {
			h.Healthy++
		}
		h.Devices = append(h.Devices, dh)
	}
	if h.Healthy == 0 {
		return h, http.StatusServiceUnavailable
	}
	return h, http.StatusOK
}

func (s *service) serveHealth(w http.ResponseWriter, _ *http.Request) {
	h, code := healthOf(s.g.Stats(), s.faults)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(h)
}
