// The JSON the dashboard's API serves (internal/hub/dashboard, internal/hub/fleetview, internal/core/placementview).

export interface Taint {
  key: string;
  value?: string;
  effect: string;
  addedSecondsAgo?: number;
}

export interface Cluster {
  name: string;
  accepted: boolean;
  joined: string;
  available: string;
  availableReason?: string;
  availableMessage?: string;
  availableForSeconds?: number;
  leaseRenewedSecondsAgo?: number;
  leaseDurationSeconds: number;
  taints: Taint[];
  sets: string[];
  labels: Record<string, string>;
  claims: Record<string, string>;
  gpus: Record<string, number>;
  kubernetesVersion?: string;
  deleting?: boolean;
}

export interface ModelTotal {
  model: string;
  clusters: number;
  allocatable: number;
  free: number;
  mostFreeOnANode: number;
  clustersWithCurrentFigures: number;
}

export interface Figures {
  capacity: number;
  allocatable: number;
  requested: number;
  free: number;
  largestNodeAllocatable: number;
  mostFreeOnANode: number;
  freeNodes: { free: number; nodes: number }[];
  nodes?: NodeGPUs[];
}

export interface NodeGPUs {
  name: string;
  allocatable: number;
  requested: number;
  free: number;
}

export interface ClusterGPUs {
  cluster: string;
  available: string;
  allocatable: number;
  usage: string;
  observedTime?: string;
  validUntil?: string;
  models: { model: string; allocatable: number; figures?: Figures }[];
}

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

export interface Placement {
  namespace: string;
  name: string;
  numberOfClusters?: number;
  clusterSets: string[];
  selected: number;
  conditions: Condition[];
  decisionGroups: { index: number; name?: string; clusterCount: number }[];
  decisions: { cluster: string; reason: string; decisionGroupIndex?: number }[];
  schedulingDisabled?: boolean;
}

export interface ScoreOutput {
  prioritizer: string;
  weight: number;
  score: number;
  detail?: string;
}

export interface ClusterOutput {
  name: string;
  selected: boolean;
  filteredBy: string;
  message: string;
  scores: ScoreOutput[];
  totalScore: number;
}

export interface Output {
  placement: { namespace: string; name: string };
  decisions: { clusterName: string; score: number; reason: string; decisionGroupIndex: number; decisionGroupName: string }[];
  clusters: ClusterOutput[];
  conditions: Condition[];
}

export interface Explanation {
  explanation: Output;
  placement?: string;
  hub?: Placement;
}

export interface Work {
  cluster: string;
  name: string;
  manifests: number;
  applied: string;
  available: string;
  degraded?: string;
  complete?: string;
  manifestsApplied: number;
  manifestsAvailable: number;
  replicaSet?: string;
  problems?: string[];
  feedback: string[];
}

export interface WorkReplicaSet {
  namespace: string;
  name: string;
  placements: { name?: string; availableDecisionGroups?: string; summary: Summary }[];
  summary: Summary;
  conditions: Condition[];
}

export interface Summary {
  total: number;
  desiredTotal?: number;
  applied: number;
  available: number;
  degraded: number;
  progressing?: number;
}

export interface AddOn {
  cluster: string;
  name: string;
  installNamespace?: string;
  available: string;
  degraded?: string;
  progressing?: string;
  health?: string;
  message?: string;
  configs: string[];
}

export interface Job {
  namespace: string;
  name: string;
  queue?: string;
  clusterQueue?: string;
  quotaReserved?: string;
  admitted?: string;
  finished?: string;
  evicted?: string;
  clusterName?: string;
  nominatedClusterNames?: string[];
  admissionChecks: { name: string; state: string; message?: string }[];
  podSets: { name: string; count: number }[];
  ageSeconds?: number;
  message?: string;
  timeline: { time: string; type: string; status: string; reason?: string; message?: string }[];
  /**
   * A pending workload's place in its ClusterQueue (computed as `flotilla explain workload` does),
   * and up to five of the workloads ahead of it, the head of the queue first.
   */
  queuePlace?: { position: number; pending: number; first: QueuedWorkload[] };
}

export interface QueuedWorkload {
  namespace: string;
  name: string;
  priority: number;
  queueOrderTime: string;
}

export interface Federation {
  namespace: string;
  name: string;
  phase: string;
  round: number;
  rounds: number;
  clients: number;
  message?: string;
}

/** A root policy and each placed cluster's compliance (GET /api/policies). */
export interface Policy {
  namespace: string;
  name: string;
  remediation?: string;
  /** Compliant, NonCompliant, Pending, or absent while a cluster has not reported. */
  compliant?: string;
  disabled?: boolean;
  clusters: { cluster: string; compliant?: string }[];
}

export interface GPUPoint {
  time: string;
  allocatable: number;
  free: number;
}

export interface GPUHistory {
  intervalSeconds: number;
  samples: number;
  models: { model: string; points: GPUPoint[] }[];
}

/** How one cluster stands with a root policy (GET /api/policies/NS/NAME/clusters/CLUSTER). */
export interface PolicyExplanation {
  namespace: string;
  name: string;
  cluster: string;
  compliant?: string;
  templates: {
    name: string;
    compliant?: string;
    message?: string;
    messageTime?: string;
    objects: { object: string; compliant?: string; reason?: string; missing?: boolean; diff?: string[] }[];
  }[];
}

/** A cluster's last loss, stage by stage (GET /api/clusters/NAME/timeline). */
export interface Timeline {
  cluster: string;
  epoch: number;
  events: { time: string; stage: string; text: string; workload?: string; cluster?: string }[];
  notes?: string[];
}

/** A workload waiting in a team's ClusterQueue, in Kueue's order. */
export interface PendingWorkload {
  namespace: string;
  name: string;
  position: number;
  priority: number;
  pods: number;
  gpus: number;
  model?: string;
  queued: string;
}

/** One team of a FleetQueue now; maps are by model, "" for any model. */
export interface TeamView {
  name: string;
  namespace: string;
  clusterQueue: string;
  weight: number;
  guaranteed: Record<string, number>;
  used: Record<string, number>;
  demand: Record<string, number>;
  fair: Record<string, number>;
  pending: number;
  queue: PendingWorkload[];
}

/** One team's GPUs of one model over time. */
export interface ShareSeries {
  team: string;
  model: string;
  points: { time: string; used: number; fair: number }[];
}

/** A FleetQueue (GET /api/queues). */
export interface QueueView {
  name: string;
  admissionCheck: string;
  reclaim: string;
  models: { model: string; gpus: number }[];
  teams: TeamView[];
  notReady?: string;
  history: ShareSeries[];
}

export interface QueuesPage {
  served: boolean;
  message?: string;
  intervalSeconds: number;
  queues: QueueView[];
}

/** One workload's page (GET /api/jobs/NAMESPACE/NAME). */
export interface WorkloadPage extends Job {
  events: { time: string; stage: string; text: string }[];
}
