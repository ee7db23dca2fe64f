#!/bin/bash
# One task per node of a panta.sbatch job (srun --ntasks-per-node=1): starts this node's vLLM server(s) and
# one `panta worker` per server, pointed at it through --base-url; on the head node the first JUDGE_GPUS GPUs
# serve the collector's judge instead, on their own server without a worker. Each worker waits for its
# server's health before taking events (and logs what it waits for), so both start together. On SIGTERM
# (from panta.sbatch, scancel or the end of the job) it stops in order: the workers first (each finishes the
# calls it holds and exits 0), then vLLM, which they need until then.
# Nothing here needs editing: the settings come from panta.sbatch's environment.
set -uo pipefail

# Slurm's name for this node (as `scontrol show hostnames` gives HEAD_NODE), which need not be its hostname
host="${SLURMD_NODENAME:-$(hostname -s)}"
log() { printf '%s node.sh %s: %s\n' "$(date -Is)" "$host" "$*" >&2; }
# glibc's malloc keeps what it frees instead of handing it back to the kernel and taking it again as page
# faults (as deploy/Dockerfile sets it; bench/NOTES.md: glibc's freed memory); a GLIBC_TUNABLES of your own wins.
PANTA_MALLOC=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=268435456
PANTA=(env "GLIBC_TUNABLES=${GLIBC_TUNABLES:-$PANTA_MALLOC}" "${NODE:-node}" "$PANTA_HOME/packages/cli/bin/panta.js")
read -r -a VLLM_CMD <<< "${VLLM:-vllm}"
read -r -a EXTRA <<< "${LLM_EXTRA_ARGS:-}"

# The GPUs Slurm gave this step (CUDA_VISIBLE_DEVICES), else every GPU nvidia-smi lists.
if [[ -n ${CUDA_VISIBLE_DEVICES:-} ]]; then
  IFS=, read -r -a gpus <<< "$CUDA_VISIBLE_DEVICES"
else
  mapfile -t gpus < <(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null)
fi

# servers: "devices port tensor_parallel role"; the judge's server first, on the head node only.
servers=()
judge=0
if [[ $host == "${HEAD_NODE%%.*}" ]]; then judge=${JUDGE_GPUS:-0}; fi
if ((${#gpus[@]} <= judge)); then
  log "${#gpus[@]} GPU(s) visible, ${judge} of them for the judge: none left for the workers"
  exit 1
fi
if ((judge > 0)); then
  servers+=("$(IFS=,; echo "${gpus[*]:0:judge}") $JUDGE_PORT $judge judge")
fi
agent_gpus=("${gpus[@]:judge}")
# per-gpu: one server per GPU (ports LLM_PORT, LLM_PORT+1, ...); per-node: one server, tensor parallel.
if [[ ${LLM_MODE:-per-gpu} == per-node ]]; then
  servers+=("$(IFS=,; echo "${agent_gpus[*]}") $LLM_PORT ${#agent_gpus[@]} agents")
else
  for i in "${!agent_gpus[@]}"; do servers+=("${agent_gpus[$i]} $((LLM_PORT + i)) 1 agents"); done
fi

vllm_pids=() worker_pids=() worker_ports=() worker_devices=() stopping=""

stop() {
  [[ -n $stopping ]] && return
  stopping=1
  log "stopping: workers first (they finish the calls they hold)"
  for pid in "${worker_pids[@]}"; do [[ -n $pid ]] && kill -TERM "$pid" 2>/dev/null; done
  for pid in "${worker_pids[@]}"; do [[ -n $pid ]] && wait "$pid" 2>/dev/null; done
  log "workers stopped; stopping vLLM"
  for pid in "${vllm_pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for pid in "${vllm_pids[@]}"; do wait "$pid" 2>/dev/null; done
  log "stopped"
}
trap 'stop; exit 0' TERM INT

# vLLM runs in its own session (setsid): a SIGTERM sent to this task's process group reaches the workers
# and this script, never vLLM directly, so the workers' last calls are still answered. Only the variables
# vLLM should read reach it (VLLM_API_KEY, VLLM_BATCH_INVARIANT, HF_*); Panta's own settings are named LLM_*
# because vLLM reads VLLM_PORT as the base of its internal ports.
for server in "${servers[@]}"; do
  read -r devices port tp role <<< "$server"
  model=$LLM_MODEL
  [[ $role == judge ]] && model=${JUDGE_MODEL:-$LLM_MODEL}
  CUDA_VISIBLE_DEVICES="$devices" setsid "${VLLM_CMD[@]}" serve "$model" \
    --host 0.0.0.0 --port "$port" --tensor-parallel-size "$tp" \
    --max-num-seqs "$LLM_MAX_NUM_SEQS" --max-model-len "$LLM_MAX_MODEL_LEN" --scheduling-policy priority "${EXTRA[@]}" \
    > "$LOG_DIR/vllm-$host-$port.log" 2>&1 &
  vllm_pids+=($!)
  log "vLLM ($role) on GPU(s) $devices, port $port (log: $LOG_DIR/vllm-$host-$port.log)"
done

# One worker per agents' server, in its own session like vLLM: only this script signals it, exactly once. A
# worker that crashes or gave up waiting for its server is started again (it resumes: commits are
# idempotent); one that exits 0 was told to stop.
# A worker sees its own server's GPU(s) (CUDA_VISIBLE_DEVICES): onnx encoders with device cuda (or
# PANTA_ENCODER_DEVICE=cuda) embed there, next to vLLM's 0.9 of its memory (~2 GB for the four encoders).
start_worker() { # index port devices
  CUDA_VISIBLE_DEVICES="$3" setsid "${PANTA[@]}" worker --concurrency "$WORKER_CONCURRENCY" --base-url "http://127.0.0.1:$2/v1" --lock-ms "${WORKER_LOCK_MS:-30000}" \
    >> "$LOG_DIR/worker-$host-$2.log" 2>&1 &
  worker_pids[$1]=$!
}
for i in "${!servers[@]}"; do
  read -r devices port _ role <<< "${servers[$i]}"
  [[ $role == agents ]] || continue
  worker_ports[i]=$port
  worker_devices[i]=$devices
  start_worker "$i" "$port" "$devices"
done
log "${#worker_pids[@]} worker(s) started, each waiting for its vLLM (Redis from PANTA_REDIS_URL)"

# Serve until told to stop (the trap, or the file panta.sbatch's orderly stop writes), until every worker has exited 0 on its own, or until a vLLM server
# exits (a GPU fault, out of memory: its log says why), which stops this node: the other nodes go on.
while :; do
  sleep 1 &
  wait $!
  # panta.sbatch's orderly stop: srun answers a SIGTERM by killing its step outright, so it asks through a file
  if [[ -e $LOG_DIR/.stop ]]; then
    stop
    exit 0
  fi
  for i in "${!vllm_pids[@]}"; do
    if ! kill -0 "${vllm_pids[$i]}" 2>/dev/null; then
      read -r _ port _ _ <<< "${servers[$i]}"
      log "vLLM on port $port exited: see $LOG_DIR/vllm-$host-$port.log; stopping this node"
      stop
      exit 1
    fi
  done
  alive=0
  for i in "${!worker_pids[@]}"; do
    pid="${worker_pids[$i]}"
    [[ -z $pid ]] && continue
    if kill -0 "$pid" 2>/dev/null; then alive=$((alive + 1)); continue; fi
    code=0
    wait "$pid" || code=$?
    if ((code == 0)); then
      worker_pids[i]=""
      log "worker for port ${worker_ports[$i]} exited 0"
    else
      log "worker for port ${worker_ports[$i]} exited $code: starting it again"
      start_worker "$i" "${worker_ports[$i]}" "${worker_devices[$i]}"
      alive=$((alive + 1))
    fi
  done
  ((alive == 0)) && break
done
stop
exit 0
