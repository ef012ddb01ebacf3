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

// writeKwokStages writes KwokStages of the binaries' stages into dir and returns its path.
func writeKwokStages(b Binaries, dir string) (string, error) {
	data, err := os.ReadFile(b.Path(KwokStagesFile))
	if err != nil {
		return "", err
	}
	out, err := KwokStages(data)
	if err != nil {
		return "", fmt.Errorf("%s: %w", b.Path(KwokStagesFile), err)
	}
	path := filepath.Join(dir, KwokStagesFile)
	return path, os.WriteFile(path, out, 0o644)
}
