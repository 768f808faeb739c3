// `kube-lab upstream-profile`: kube-scheduler's default profile, as the
// pinned release builds it, printed as JSON for toy-scheduler's registry test
// (test/unit/registry_test.cpp) to compare with its own.
//
// It prints the default profile's multiPoint list (names and weights, in
// order, after the default feature gates) and, per extension point, the
// plugins the framework runs there (ListPlugins), with the Score weights.
// The scheduler is constructed and never started: its client and informers
// are never asked anything, so a client-go fake clientset stands in for a
// connection it does not need.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/kubernetes/pkg/scheduler"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/profile"
)

type upstreamPlugin struct {
	Name   string `json:"name"`
	Weight int32  `json:"weight,omitempty"`
}

type upstreamProfile struct {
	SchedulerName string                      `json:"schedulerName"`
	MultiPoint    []upstreamPlugin            `json:"multiPoint"`
	Points        map[string][]upstreamPlugin `json:"points"`
}

func runUpstreamProfile(args []string) int {
	if len(args) != 0 {
		fmt.Fprintln(os.Stderr, "usage: kube-lab upstream-profile (no arguments; prints JSON)")
		return 2
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := fake.NewSimpleClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: client.EventsV1()})
	// The default configuration as kube-scheduler makes it (v1 defaults,
	// the default feature gates), converted as scheduler.New does.
	var versioned configv1.KubeSchedulerConfiguration
	scheme.Scheme.Default(&versioned)
	var cfg schedulerapi.KubeSchedulerConfiguration
	if err := scheme.Scheme.Convert(&versioned, &cfg, nil); err != nil {
		fmt.Fprintln(os.Stderr, "upstream-profile:", err)
		return 1
	}
	s, err := scheduler.New(ctx, client, factory, nil, profile.NewRecorderFactory(broadcaster),
		scheduler.WithProfiles(cfg.Profiles...))
	if err != nil {
		fmt.Fprintln(os.Stderr, "upstream-profile:", err)
		return 1
	}
	var out []upstreamProfile
	for _, prof := range cfg.Profiles {
		p := upstreamProfile{SchedulerName: prof.SchedulerName, Points: map[string][]upstreamPlugin{}}
		for _, pl := range prof.Plugins.MultiPoint.Enabled {
			p.MultiPoint = append(p.MultiPoint, upstreamPlugin{Name: pl.Name, Weight: pl.Weight})
		}
		listed := s.Profiles[prof.SchedulerName].ListPlugins()
		v := reflect.ValueOf(listed).Elem()
		for i := 0; i < v.NumField(); i++ {
			set, ok := v.Field(i).Interface().(schedulerapi.PluginSet)
			if !ok || len(set.Enabled) == 0 {
				continue
			}
			key := v.Type().Field(i).Name
			for _, pl := range set.Enabled {
				p.Points[key] = append(p.Points[key], upstreamPlugin{Name: pl.Name, Weight: pl.Weight})
			}
		}
		out = append(out, p)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "upstream-profile:", err)
		return 1
	}
	return 0
}
