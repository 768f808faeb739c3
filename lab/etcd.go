package main

// Embedded etcd (go.etcd.io/etcd/server/v3/embed), the recipe Kubernetes'
// own storage tests use: loopback ports, no fsync (a lab does not need
// durability against power loss, and fsync dominates write latency),
// error-level logs to DIR/etcd.log. Data lives in DIR/etcd and survives
// restarts on the same DIR.

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/klog/v2"
)

type etcdServer struct {
	e         *embed.Etcd
	clientURL string
}

func startEtcd(dir string) (*etcdServer, error) {
	dataDir := filepath.Join(dir, "etcd")
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, err
	}
	// Reuse the previous ports when they are free: the member's peer URL is
	// recorded in its data, keeping it stable avoids surprises on restart.
	portsFile := filepath.Join(dir, "etcd-ports")
	clientPort, peerPort := 0, 0
	if b, err := os.ReadFile(portsFile); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			c, _ := strconv.Atoi(f[0])
			p, _ := strconv.Atoi(f[1])
			if portFree(c) && portFree(p) {
				clientPort, peerPort = c, p
			}
		}
	}
	if clientPort == 0 {
		var err error
		if clientPort, err = freePort(); err != nil {
			return nil, err
		}
		if peerPort, err = freePort(); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(portsFile, []byte(fmt.Sprintf("%d %d\n", clientPort, peerPort)), 0o644); err != nil {
		return nil, err
	}

	cfg := embed.NewConfig()
	cfg.Name = "lab"
	cfg.Dir = dataDir
	clientURL := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", clientPort)}
	peerURL := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", peerPort)}
	cfg.ListenClientUrls = []url.URL{clientURL}
	cfg.AdvertiseClientUrls = []url.URL{clientURL}
	cfg.ListenPeerUrls = []url.URL{peerURL}
	cfg.AdvertisePeerUrls = []url.URL{peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name) // must follow the peer URLs
	cfg.UnsafeNoFsync = true
	cfg.LogLevel = "error"
	cfg.LogOutputs = []string{filepath.Join(dir, "etcd.log")}
	cfg.QuotaBackendBytes = 8 << 30 // the 2 GiB default is tight for 5000-node benches

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, err
	case <-time.After(60 * time.Second):
		e.Server.Stop()
		e.Close()
		return nil, fmt.Errorf("not ready after 60s")
	}
	return &etcdServer{e: e, clientURL: clientURL.String()}, nil
}

func (s *etcdServer) stop() {
	s.e.Close()
	select {
	case <-s.e.Server.StopNotify():
	case <-time.After(5 * time.Second):
		klog.Warning("etcd did not stop within 5s")
	}
}

// freePort asks the kernel for a free loopback port. There is a small race
// until the real listener binds it; acceptable for a lab.
// freePort picks a port that is free now and stays free until the server
// that asked for it binds it. A port from the kernel's ephemeral range (what
// listening on :0 gives) is not: any outgoing connection on the machine may
// take it as its local port in between, and the apiserver then fails with
// "address already in use" (seen with several labs and tests at once). So
// the port is drawn below that range, where only listeners go.
func freePort() (int, error) {
	lo, hi := 20000, ephemeralLow()
	if hi-lo < 1000 {
		lo, hi = 10000, 20000
	}
	for i := 0; i < 200; i++ {
		port := lo + rand.IntN(hi-lo)
		if portFree(port) {
			return port, nil
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ephemeralLow: the start of the kernel's ephemeral port range (32768 if
// it cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n <= 1024 {
		return 32768
	}
	return n
}

func portFree(port int) bool {
	if port <= 0 || port > 65535 {
		return false
	}
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// choosePort picks the apiserver port: --port, else DIR/port from an
// earlier run (clients holding the old kubeconfig reconnect to the same
// address), else a free port. The choice is saved in DIR/port.
func choosePort(dir string, flagPort int) (int, error) {
	path := filepath.Join(dir, "port")
	port := flagPort
	if port == 0 {
		if b, err := os.ReadFile(path); err == nil {
			port, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
	}
	if port != 0 && !portFree(port) {
		return 0, fmt.Errorf("port %d on 127.0.0.1 is in use", port)
	}
	if port == 0 {
		var err error
		if port, err = freePort(); err != nil {
			return 0, err
		}
	}
	return port, os.WriteFile(path, []byte(strconv.Itoa(port)+"\n"), 0o644)
}
