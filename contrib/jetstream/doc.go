// Package jetstream serves GPU jobs beyond one machine: workers on GPU hosts take jobs off a
// NATS JetStream work-queue stream and run them on their device group (package group);
// clients in any process submit jobs and get futures back.
//
//	conn, _ := jetstream.Connect(ctx)              // an embedded server, files in the user cache dir
//	// conn, _ := jetstream.Connect(ctx, jetstream.WithURL(urls...), jetstream.WithNATS(creds...))
//	w := jetstream.NewWorker(conn, g)              // g: the group of this host's devices
//	_ = w.Handle("saxpy", saxpy)                   // code lives in the worker; messages carry data
//	go w.Serve(ctx)                                // until ctx ends, then drains
//	c, _ := jetstream.NewClient(ctx, conn)
//	out, err := c.Submit(ctx, jetstream.Job{Handler: "saxpy", Input: in}).Wait(ctx)
//
// With no URL, Connect starts a JetStream server embedded in the process (StartServer gives one
// to share, and WithLoopback opens it to other processes of the host); with URLs, the same
// workers and clients talk to a NATS cluster, with the user's credentials and TLS passed
// through WithNATS. Nothing else changes between the two.
//
// A worker takes no more jobs than its group can run (its healthy devices' streams), so
// backpressure crosses machines, and keeps each job it runs alive with in-progress acks. A
// worker that dies under a job goes silent: after the ack wait (WithAckWait) the job goes to
// another worker. A job submitted twice under one id within the duplicate window is queued
// once (JetStream's message-id deduplication), and a result carries its job's id, so a job run
// again after a crash completes once as its client sees it. A failed job is tried again, on
// any worker, up to WithMaxAttempts times, then goes to the dead-letter subject
// <queue>.dead.<handler> with every error it met (DeadLetter), and fails to its client with
// ErrDeadLetter; a handler error marked Permanent fails at once.
//
// Bad input gets clear errors at the caller: no server reachable (ErrNoServer), a handler no
// live worker advertises (ErrUnknownHandler, at once, not a hang), an input over the server's
// or the worker's limit (ErrTooLarge, before it gets GPU memory), a stream that exists with
// other settings (ErrStreamSettings).
package jetstream
