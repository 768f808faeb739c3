package main

// One pod's judgement: what kube-scheduler's scheduling cycle computes for
// it (schedule_one.go's findNodesThatFitPod and prioritizeNodes), kept
// whole for every node instead of summed up.

import (
	"context"
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

type judgeAnswer struct {
	Nodes     int         `json:"nodes"`
	BoundPods int         `json:"boundPods"`
	Pods      []podAnswer `json:"pods"`
}

// nodeVerdict is one node's fate: "feasible"; "rejected" by a Filter;
// "leftOut" by a PreFilter's node set; "preFilter" when a PreFilter
// rejected the pod before any node was filtered.
type nodeVerdict struct {
	Node    string `json:"node"`
	Verdict string `json:"verdict"`
	Plugin  string `json:"plugin,omitempty"`
	Code    string `json:"code,omitempty"`
	Reason  string `json:"reason,omitempty"` // the status's reasons, ", "-joined
}

type nodeScores struct {
	Node    string           `json:"node"`
	Plugins map[string]int64 `json:"plugins"` // normalized, before the weight
	Total   int64            `json:"total"`   // weighted sum, as the scheduler compares
}

type podAnswer struct {
	Pod     string           `json:"pod"`
	UID     string           `json:"uid"`
	Profile string           `json:"profile"`
	Nodes   []nodeVerdict    `json:"nodes"`
	Scored  bool             `json:"scored"` // two or more feasible nodes: the scheduler scores
	Weights map[string]int64 `json:"weights,omitempty"`
	Scores  []nodeScores     `json:"scores,omitempty"`
}

func joinReasons(s *fwk.Status) string { return strings.Join(s.Reasons(), ", ") }

// judgePod runs the profile's PreFilter, Filter (each node), PreScore, Score
// and NormalizeScore for the pod on the snapshot, as the scheduling cycle
// would at percentageOfNodesToScore 100 (below 100 nodes, every node).
func judgePod(ctx context.Context, fw framework.Framework, snapshot fwk.SharedLister, pod *v1.Pod) (podAnswer, error) {
	a := podAnswer{Pod: pod.Namespace + "/" + pod.Name, UID: string(pod.UID), Profile: pod.Spec.SchedulerName}
	all, err := snapshot.NodeInfos().List()
	if err != nil {
		return a, err
	}
	state := framework.NewCycleState()
	preRes, s, unscheduled := fw.RunPreFilterPlugins(ctx, state, pod)
	if !s.IsSuccess() {
		if !s.IsRejected() {
			return a, s.AsError()
		}
		for _, ni := range all {
			a.Nodes = append(a.Nodes, nodeVerdict{Node: ni.Node().Name, Verdict: "preFilter", Plugin: s.Plugin(),
				Code: s.Code().String(), Reason: joinReasons(s)})
		}
		sortVerdicts(a.Nodes)
		return a, nil
	}
	var feasible []fwk.NodeInfo
	for _, ni := range all {
		name := ni.Node().Name
		if !preRes.AllNodes() && !preRes.NodeNames.Has(name) {
			a.Nodes = append(a.Nodes, nodeVerdict{Node: name, Verdict: "leftOut",
				Code:   fwk.UnschedulableAndUnresolvable.String(),
				Reason: fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(unscheduled))})
			continue
		}
		// No nominated pods in a judged cluster: RunFilterPluginsWithNominatedPods
		// would run exactly this, once.
		st := fw.RunFilterPlugins(ctx, state, pod, ni)
		switch {
		case st.IsSuccess():
			feasible = append(feasible, ni)
			a.Nodes = append(a.Nodes, nodeVerdict{Node: name, Verdict: "feasible"})
		case st.IsRejected():
			a.Nodes = append(a.Nodes, nodeVerdict{Node: name, Verdict: "rejected", Plugin: st.Plugin(),
				Code: st.Code().String(), Reason: joinReasons(st)})
		default:
			return a, st.AsError()
		}
	}
	sortVerdicts(a.Nodes)
	if len(feasible) < 2 { // one node fits: taken unscored, as schedulePod does
		return a, nil
	}
	return a, scorePod(ctx, fw, state, pod, feasible, &a)
}

func scorePod(ctx context.Context, fw framework.Framework, state fwk.CycleState, pod *v1.Pod, feasible []fwk.NodeInfo, a *podAnswer) error {
	if s := fw.RunPreScorePlugins(ctx, state, pod, feasible); !s.IsSuccess() {
		return s.AsError()
	}
	scores, s := fw.RunScorePlugins(ctx, state, pod, feasible)
	if !s.IsSuccess() {
		return s.AsError()
	}
	a.Scored = true
	weights := map[string]int64{}
	for _, p := range fw.ListPlugins().Score.Enabled {
		weights[p.Name] = int64(p.Weight)
	}
	a.Weights = map[string]int64{} // the plugins that scored: PreScore skipped none of them
	for _, ns := range scores {
		out := nodeScores{Node: ns.Name, Plugins: map[string]int64{}, Total: ns.TotalScore}
		for _, ps := range ns.Scores {
			w := weights[ps.Name]
			if w == 0 {
				return fmt.Errorf("score plugin %s has no weight", ps.Name)
			}
			a.Weights[ps.Name] = w
			out.Plugins[ps.Name] = ps.Score / w // RunScorePlugins weighs the normalized score
		}
		a.Scores = append(a.Scores, out)
	}
	sort.Slice(a.Scores, func(i, j int) bool { return a.Scores[i].Node < a.Scores[j].Node })
	return nil
}

func sortVerdicts(v []nodeVerdict) {
	sort.Slice(v, func(i, j int) bool { return v[i].Node < v[j].Node })
}
