package jetstream_test

import (
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/nats-io/nats-server/v2/server"
)

// The environment of a NATS server process of the cluster test: its name, client and cluster
// ports, the cluster's routes and its store dir.
const (
	serverEnv      = "GPUACTOR_JS_SERVER"
	portEnv        = "GPUACTOR_JS_PORT"
	clusterPortEnv = "GPUACTOR_JS_CLUSTER_PORT"
	routesEnv      = "GPUACTOR_JS_ROUTES"
	dirEnv         = "GPUACTOR_JS_DIR"
)

// serverMain runs one JetStream server of a cluster until it is killed or gets SIGTERM.
func serverMain() {
	port, _ := strconv.Atoi(os.Getenv(portEnv))
	cport, _ := strconv.Atoi(os.Getenv(clusterPortEnv))
	opts := &server.Options{
		ServerName: os.Getenv(serverEnv), Host: "127.0.0.1", Port: port,
		JetStream: true, StoreDir: os.Getenv(dirEnv), NoSigs: true, NoLog: true,
		Cluster: server.ClusterOpts{Name: "gpuactor-test", Host: "127.0.0.1", Port: cport},
		Routes:  server.RoutesFromStr(os.Getenv(routesEnv)),
	}
	if dir := os.Getenv(secureEnv); dir != "" {
		if err := secure(opts, dir); err != nil {
			fmt.Fprintln(os.Stderr, "server:", err)
			os.Exit(1)
		}
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
	ns.Start()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	<-sig
	ns.Shutdown()
	os.Exit(0)
}
