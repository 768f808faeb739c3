package main

// `kube-lab toxiproxy`: Shopify's toxiproxy server (github.com/Shopify/
// toxiproxy/v2, pinned in go.mod) in the lab's binary, for the fault tests:
// a TCP proxy between a client and the API server whose faults (toxics:
// latency, reset_peer, slicer, timeout, ...) and on/off state are set
// through its HTTP API while traffic flows. Inside kube-lab rather than a
// binary of its own so that the lab's one pinned build brings it.

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/spf13/pflag"
	"toysched.dev/lab/ports"
)

func runToxiproxy(args []string) int {
	fs := pflag.NewFlagSet("kube-lab toxiproxy", pflag.ContinueOnError)
	host := fs.String("host", "127.0.0.1", "address of toxiproxy's HTTP API")
	port := fs.Int("port", 0, "port of toxiproxy's HTTP API; 0: a free one")
	portFile := fs.String("port-file", "", "once the API answers, write its port here (written aside, then renamed)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		return fail("toxiproxy: %v", err)
	}
	if *port == 0 {
		p, err := ports.Free()
		if err != nil {
			return fail("toxiproxy: %v", err)
		}
		*port = p
	}
	logger := zerolog.New(os.Stderr).With().Timestamp().Logger().Level(zerolog.InfoLevel)
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), logger)
	addr := fmt.Sprintf("http://%s:%d", *host, *port)
	if *portFile != "" {
		go func() {
			// Listen blocks and logs its own failure (fatal): announce the
			// port only once the API really answers on it.
			for {
				if r, err := http.Get(addr + "/version"); err == nil {
					r.Body.Close()
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			tmp := *portFile + ".tmp"
			if os.WriteFile(tmp, []byte(strconv.Itoa(*port)+"\n"), 0o644) == nil {
				_ = os.Rename(tmp, *portFile)
			}
		}()
	}
	server.Listen(*host, strconv.Itoa(*port))
	return 1
}
