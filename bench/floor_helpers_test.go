//go:build integration

package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla/flotilla/bench/floor"
	"github.com/flotilla/flotilla/internal/contract/wellknown"
)

// What every benchmark does with bench/floor: probe its API server's rates for the kinds of
// write its path makes (probeFloor), count the writes the path made (writesMade), and put its
// time beside the time those writes alone take at the probed rates (ownFloor).

// floorProbeObjects is how many objects of each kind the probe writes: enough for a rate that
// holds (a few seconds of writes), few enough to add seconds, not minutes, to a run.
func floorProbeObjects() int {
	if smoke() {
		return 20
	}
	return 1000
}

// probeFloor measures the write floor of api's server for targets, from floorWorkers writers,
// in floorNamespace (created if missing). Run it with the measured controllers stopped, so that
// they neither compete nor react to the probe's objects; the stopped hub's webhook
// configuration is removed first, since nothing serves it.
func probeFloor(ctx context.Context, api *hubAPIServer, targets []floor.Target) (floor.Rates, error) {
	if err := removeHubWebhook(ctx, api.Kube); err != nil {
		return nil, err
	}
	if err := api.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: floorNamespace}}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	return floor.Probe(ctx, api.Client, targets, floor.Options{Objects: floorProbeObjects(), Workers: floorWorkers})
}

// removeHubWebhook deletes the ValidatingWebhookConfiguration a stopped Flotilla hub registered
// on the benchmark's own API server (if it is there): with the hub stopped nothing serves it,
// and its failurePolicy would refuse the writes it covers.
func removeHubWebhook(ctx context.Context, cs kubernetes.Interface) error {
	err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, wellknown.HubWebhookConfiguration, metav1.DeleteOptions{})
	return client.IgnoreNotFound(err)
}

// writesMade are the successful writes between two readings of apiserverRequests, by kind, to
// the resources of targets (with their subresources): the path's writes. The rest (a
// controller's start-up writes, Lease renewals) is returned apart, for the log.
func writesMade(before, after map[string]float64, targets []floor.Target) (path, rest floor.Writes) {
	path, rest = floor.Writes{}, floor.Writes{}
	for k, v := range after {
		f := strings.Fields(k)
		if d := v - before[k]; d > 0 && len(f) == 3 && mutatingVerbs[f[0]] && strings.HasPrefix(f[2], "2") {
			key := floor.Key{Verb: f[0], Resource: f[1]}
			res, _, _ := strings.Cut(f[1], "/")
			if slices.ContainsFunc(targets, func(t floor.Target) bool { return t.Resource == res }) {
				path[key] += d
			} else {
				rest[key] += d
			}
		}
	}
	return path, rest
}

// ownFloor is how long the path's writes take at rates; a kind the probe did not time (a
// verb it does not make, such as APPLY) is left out and named in the returned note, which makes
// the floor lower and the multiple of it larger: never in the measured path's favor.
func ownFloor(rates floor.Rates, made floor.Writes) (floorTime float64, note string) {
	covered, missing := rates.Split(made)
	t, err := rates.Time(covered)
	if err != nil { // cannot happen: covered has a rate for every kind
		panic(err)
	}
	if len(missing) > 0 {
		note = fmt.Sprintf("; left out of the floor (no rate probed): %s", missing)
	}
	return t.Seconds(), note
}
