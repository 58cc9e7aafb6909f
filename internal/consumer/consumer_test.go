package consumer

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
)

func TestScalerFromManyGoroutines(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendSim), device.WithKernelCache(""))
	require.NoError(t, err)
	defer func() { require.NoError(t, dev.Close()) }()
	sc, err := NewScaler(ctx, dev)
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for g := range errs {
		wg.Go(func() {
			xs := make([]float32, 1000+g)
			for i := range xs {
				xs[i] = float32(i)
			}
			if err := sc.Scale(ctx, xs, float32(g)); err != nil {
				errs[g] = err
				return
			}
			for i, x := range xs {
				if x != float32(i)*float32(g) {
					errs[g] = errors.New("wrong element")
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	// Everything given back but the staging pool, which the device keeps for later copies.
	staging := dev.Stats().Staging
	assert.Zero(t, staging.InUseBytes)
	assert.Equal(t, device.Usage{Pinned: device.KindUsage{Bytes: staging.PinnedBytes, Count: staging.PinnedBytes / device.StagingSlotSize}},
		dev.Stats().Memory, "everything given back")
}

// The misuses the library once allowed, each as a program of its own, and why the compiler
// must refuse it; "" marks the control, which must compile.
var misuses = map[string]struct{ stmt, why string }{
	"control: the public API":  {`_ = streams.Default(dev).Synchronize(ctx)`, ""},
	"charge phantom usage":     {`dev.Charge(0, 1<<30)`, "no field or method Charge"},
	"uncharge":                 {`dev.Uncharge(0, 123)`, "no field or method Uncharge"},
	"per-device state":         {`dev.Local("k", func() any { return 1 })`, "no field or method Local"},
	"adopt a foreign pointer":  {`dev.Adopt(0, 256, 0, nil)`, "no field or method Adopt"},
	"retire a buffer":          {`b, _ := dev.MallocBytes(ctx, 64); dev.Retire(b)`, "no field or method Retire"},
	"enqueue a launch spec":    {`dev.Enqueue(nil, 0)`, "no field or method Enqueue"},
	"run on the actor thread":  {`device.Exec(ctx, dev, nil)`, "undefined: device.Exec"},
	"complete a future":        {`f := streams.Default(dev).HostFunc(ctx, func() {}); f.Complete(struct{}{}, nil)`, "no field or method Complete"},
	"submit an op":             {`streams.Submit(ctx, streams.Default(dev), nil, nil)`, "undefined: streams.Submit"},
	"queue on a stream":        {`streams.Enqueue(ctx, streams.Default(dev), nil)`, "undefined: streams.Enqueue"},
	"implement Mem":            {`var m device.Mem = fakeMem{}; _ = m`, "does not implement device.Mem"},
	"reach the engine room":    {`core.Run[int](ctx, nil, nil)`, "use of internal package"},
	"read a stream's handle":   {`s := streams.Default(dev); _ = s.h`, "s.h undefined"},
	"convert a future to mine": {`var f *streams.Future; _ = (*actor.Promise[struct{}])(f)`, "cannot convert"},
	// A device's actor hooks are its own: the idle hook tracks GPU completion, init binds the
	// context, shutdown frees what Close must, and the thread lock keeps CUDA's per-thread state.
	"control: tune the actor":     {`_ = device.WithActorTuning(device.ActorTuning{Mailbox: 64, Spin: device.NoSpin}); _ = streams.Default(dev)`, ""},
	"actor options to a device":   {`_ = device.WithActorOptions(actor.WithBatch(8))`, "undefined: device.WithActorOptions"},
	"replace the idle hook":       {`_ = device.WithActorTuning(actor.WithIdle(nil))`, "as device.ActorTuning value"},
	"replace the init hook":       {`_ = device.WithActorTuning(actor.WithInit(nil))`, "as device.ActorTuning value"},
	"replace the shutdown hook":   {`_ = device.WithActorTuning(actor.WithShutdown(nil))`, "as device.ActorTuning value"},
	"replace the guard":           {`_ = device.WithActorTuning(actor.WithGuard(nil))`, "as device.ActorTuning value"},
	"unlock the actor's thread":   {`_ = device.WithActorTuning(actor.WithLockedThread(false))`, "as device.ActorTuning value"},
	"a hook as a tuning field":    {`_ = device.ActorTuning{Idle: nil}`, "unknown field Idle"},
	"actor options as the tuning": {`_ = device.WithActorTuning(device.ActorTuning{}, actor.WithErrorMap(nil))`, "too many arguments"},
}

// TestMisusesDoNotCompile builds each misuse as a package of this module (through a build
// overlay, so nothing is written to the source tree) and expects the compiler to refuse it.
func TestMisusesDoNotCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a dozen programs")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	wd, err := os.Getwd()
	require.NoError(t, err)
	for name, m := range misuses {
		t.Run(name, func(t *testing.T) {
			src := `package misuse

import (
	"context"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/streams"
)

type fakeMem struct{}

func (fakeMem) region() (*device.Buffer, uint64, uint64) { return nil, 0, 0 }

var _ actor.Waiter

func use(ctx context.Context, dev *device.Device) {
	` + m.stmt + `
}
`
			if strings.Contains(m.stmt, "alloc.") {
				src = strings.Replace(src, `"context"`, `"context"
	"github.com/gpuactor/gpuactor/alloc"`, 1)
			}
			if strings.Contains(m.stmt, "core.") {
				src = strings.Replace(src, `"context"`, `"context"
	"github.com/gpuactor/gpuactor/internal/core"`, 1)
			}
			dir := t.TempDir()
			file := filepath.Join(dir, "misuse.go")
			require.NoError(t, os.WriteFile(file, []byte(src), 0o644))
			overlay, err := json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(wd, "misuse", "misuse.go"): file}})
			require.NoError(t, err)
			ov := filepath.Join(dir, "overlay.json")
			require.NoError(t, os.WriteFile(ov, overlay, 0o644))
			out, err := exec.Command(goBin, "build", "-overlay", ov, "./misuse").CombinedOutput()
			if m.why == "" {
				require.NoError(t, err, "the control does not compile, so the harness proves nothing:\n%s", out)
				return
			}
			require.Error(t, err, "%s compiled:\n%s", name, src)
			assert.Contains(t, string(out), m.why)
		})
	}
}

// TestNoHeavyModules: a consumer of gpuactor gets purego, zap, x/sync (and testify, for the
// library's tests) in its module graph, and nothing like the benchmark suite's plotting.
func TestNoHeavyModules(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(goBin, "list", "-m", "all").CombinedOutput()
	require.NoError(t, err, "%s", out)
	list := string(out)
	for _, heavy := range []string{"gonum.org", "go-latex", "go-pdf", "svgo", "freetype", "golang.org/x/image"} {
		assert.NotContains(t, list, heavy)
	}
	assert.Contains(t, list, "github.com/ebitengine/purego")
	t.Logf("%s", list)
}
