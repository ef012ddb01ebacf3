package localk8s

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// kwokJitter matches a stage's default jitter.
var kwokJitter = regexp.MustCompile(`(?m)^\s*jitterDurationMilliseconds: \d+\n`)

// KwokStages returns kwok's stages with the pod-complete stage's default jitter removed.
//
// kwok takes a stage's delay as at most its jitter ("jitterDuration <= duration: the delay is
// the jitter"), and pod-complete's default jitter is 5 s, so a pod annotated
// pod-complete.stage.kwok.x-k8s.io/delay: 10m would complete after 5 s. Without the default, the
// annotation's delay holds (and pod-complete.stage.kwok.x-k8s.io/jitter-delay still adds jitter
// when set). Pods without the annotation complete after the stage's 1 s.
func KwokStages(stages []byte) ([]byte, error) {
	docs := bytes.Split(stages, []byte("\n---\n"))
	found := false
	for i, d := range docs {
		if !bytes.Contains(d, []byte("\n  name: pod-complete\n")) {
			continue
		}
		found = true
		docs[i] = kwokJitter.ReplaceAll(d, nil)
	}
	if !found {
		return nil, fmt.Errorf("kwok's stages have no pod-complete stage")
	}
	return bytes.Join(docs, []byte("\n---\n")), nil
}

// KwokPodParallelism is how many pod stages kwok plays at once (its podPlayStageParallelism,
// 4 by default). kwok stands in for one kubelet per node, and real kubelets stop their pods in
// parallel: with 4, the hundreds of pods of a fenced cluster, deleted at once with a short grace
// period, would take kwok half a minute to remove.
const KwokPodParallelism = 16

// kwokConfiguration is kwok's configuration, beside the stages in the file kwok reads. kwok
// does not default the options of a configuration it reads, so every one it needs is given:
// its defaults (kwok v0.8.0, config/v1alpha1), but for the pods' parallelism.
var kwokConfiguration = fmt.Sprintf(`apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokConfiguration
options:
  podPlayStageParallelism: %d
  nodePlayStageParallelism: 4
  nodeLeaseParallelism: 4
  podsOnNodeSyncParallelism: 1
  enablePodsOnNodeSyncListPager: true
  enablePodsOnNodeSyncStreamWatch: false
  enableDebuggingHandlers: true
  enableProfilingHandler: true
  enableContentionProfiling: false
`, KwokPodParallelism)

// writeKwokStages writes KwokStages of the binaries' stages, and kwok's configuration, into dir
// and returns the file's path.
func writeKwokStages(b Binaries, dir string) (string, error) {
	data, err := os.ReadFile(b.Path(KwokStagesFile))
	if err != nil {
		return "", err
	}
	out, err := KwokStages(data)
	if err != nil {
		return "", fmt.Errorf("%s: %w", b.Path(KwokStagesFile), err)
	}
	out = append(append(bytes.TrimRight(out, "\n"), "\n---\n"...), kwokConfiguration...)
	path := filepath.Join(dir, KwokStagesFile)
	return path, os.WriteFile(path, out, 0o644)
}
