// `kube-lab upstream-profile [--config F]`: kube-scheduler's profiles, as
// the pinned release builds them, printed as JSON for toy-scheduler's
// registry test (test/unit/registry_test.cpp) and for anyone asking what a
// config file turns into.
//
// For each profile of F (without F: kube-scheduler's default
// configuration, the default feature gates), the `multiPoint` list with its
// weights, in order, and the plugins the framework runs at each extension
// point (ListPlugins), in order, with the Score weights. The frameworks are
// built as the judge builds them (judge.go) and never run: their client is
// a client-go fake that is never asked anything.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"

	"github.com/spf13/pflag"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
)

type upstreamPlugin struct {
	Name   string `json:"name"`
	Weight int32  `json:"weight,omitempty"`
}

type upstreamProfile struct {
	SchedulerName string                      `json:"schedulerName"`
	MultiPoint    []upstreamPlugin            `json:"multiPoint"`
	Points        map[string][]upstreamPlugin `json:"points"` // keyed by the Go field of config.Plugins ("PreFilter")
}

func runUpstreamProfile(args []string) int {
	fs := pflag.NewFlagSet("kube-lab upstream-profile", pflag.ContinueOnError)
	configFile := fs.String("config", "", "a KubeSchedulerConfiguration file; default: kube-scheduler's default configuration")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(os.Stderr, "kube-lab upstream-profile: %v\n", err)
		return 1
	}
	if err := printUpstreamProfiles(os.Stdout, *configFile); err != nil {
		fmt.Fprintf(os.Stderr, "kube-lab upstream-profile: %v\n", err)
		return 1
	}
	return 0
}

func printUpstreamProfiles(w io.Writer, configFile string) error {
	klog.SetOutput(io.Discard) // the framework logs each profile's plugins; the JSON is the output
	klog.LogToStderr(false)
	profiles, err := loadProfiles(configFile)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := fake.NewClientset()
	fws, err := newFrameworks(ctx, client, nil, informers.NewSharedInformerFactory(client, 0), profiles,
		internalcache.NewEmptySnapshot())
	if err != nil {
		return err
	}
	var out []upstreamProfile
	for i, fw := range fws {
		p := upstreamProfile{SchedulerName: profiles[i].SchedulerName, Points: map[string][]upstreamPlugin{}}
		for _, pl := range profiles[i].Plugins.MultiPoint.Enabled {
			p.MultiPoint = append(p.MultiPoint, upstreamPlugin{Name: pl.Name, Weight: pl.Weight})
		}
		listed := reflect.ValueOf(fw.ListPlugins()).Elem()
		for f := 0; f < listed.NumField(); f++ {
			set, ok := listed.Field(f).Interface().(config.PluginSet)
			if !ok {
				continue
			}
			for _, pl := range set.Enabled {
				key := listed.Type().Field(f).Name
				p.Points[key] = append(p.Points[key], upstreamPlugin{Name: pl.Name, Weight: pl.Weight})
			}
		}
		out = append(out, p)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
