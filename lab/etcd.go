package main

// Embedded etcd (go.etcd.io/etcd/server/v3/embed), the recipe Kubernetes'
// own storage tests use: loopback ports, no fsync (a lab does not need
// durability against power loss, and fsync dominates write latency),
// error-level logs to DIR/etcd.log. Data lives in DIR/etcd and survives
// restarts on the same DIR.

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/klog/v2"
	"toysched.dev/lab/ports"
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
			if c != p && ports.Claim(c) == nil && ports.Claim(p) == nil {
				clientPort, peerPort = c, p
			}
		}
	}
	if clientPort == 0 {
		var err error
		if clientPort, err = ports.Free(); err != nil {
			return nil, err
		}
		if peerPort, err = ports.Free(); err != nil {
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
	if port != 0 {
		if err := ports.Claim(port); err != nil {
			return 0, err
		}
	} else {
		var err error
		if port, err = ports.Free(); err != nil {
			return 0, err
		}
	}
	return port, os.WriteFile(path, []byte(strconv.Itoa(port)+"\n"), 0o644)
}
