package streams_test

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/streams"
)

// A lookup table read by every kernel of a stream is kept in the L2 cache's persisting part:
// the stream's access-policy window covers it, and the kernels queued on the stream afterwards
// run under it. ResetPersistingL2Cache frees the persisting lines when the work is done.
func ExampleStream_SetAccessPolicy() {
	ctx := context.Background()
	dev, _ := exampleDevice(ctx)
	defer dev.Close()
	s, err := streams.New(ctx, dev)
	if err != nil {
		panic(err)
	}
	defer s.Close(ctx)
	table, err := dev.MallocBytes(ctx, 4<<20)
	if err != nil {
		panic(err)
	}
	err = s.SetAccessPolicy(ctx, streams.AccessPolicy{Window: table, HitRatio: 1,
		Hit: streams.AccessPersisting, Miss: streams.AccessStreaming})
	if err != nil {
		panic(err)
	}
	w, err := s.AccessPolicy(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(w.Bytes, w.HitRatio)
	// ... kernels reading table, queued on s ...
	if err := s.ClearAccessPolicy(ctx); err != nil {
		panic(err)
	}
	if err := dev.ResetPersistingL2Cache(ctx); err != nil {
		panic(err)
	}
	// Output: 4194304 1
}

// A stream's priority and synchronization policy can change after it is made; another stream
// can take all of its attributes at once.
func ExampleStream_SetPriority() {
	ctx := context.Background()
	dev, _ := exampleDevice(ctx)
	defer dev.Close()
	_, greatest, err := streams.PriorityRange(ctx, dev)
	if err != nil {
		panic(err)
	}
	urgent, err := streams.New(ctx, dev)
	if err != nil {
		panic(err)
	}
	defer urgent.Close(ctx)
	if err := urgent.SetPriority(ctx, greatest); err != nil {
		panic(err)
	}
	if err := urgent.SetSyncPolicy(ctx, streams.SyncBlocking); err != nil {
		panic(err)
	}
	twin, err := streams.New(ctx, dev)
	if err != nil {
		panic(err)
	}
	defer twin.Close(ctx)
	if err := twin.CopyAttributesFrom(ctx, urgent); err != nil {
		panic(err)
	}
	p, err := twin.SyncPolicy(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(twin.Priority() == greatest, p)
	// Output: true blocking
}

// An event recorded with RecordExternal inside a capture is part of the graph: every replay
// records it, so another stream (or another library) can wait for that point of each replay.
func ExampleStream_RecordExternal() {
	ctx := context.Background()
	dev, _ := exampleDevice(ctx)
	defer dev.Close()
	s := streams.Default(dev)
	e, err := streams.NewEvent(ctx, dev)
	if err != nil {
		panic(err)
	}
	if err := s.RecordExternal(ctx, e).Wait(ctx); err != nil {
		panic(err)
	}
	done, err := e.Query(ctx)
	fmt.Println(done, err)
	// Output: true <nil>
}
