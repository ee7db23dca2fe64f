#!/bin/bash
# One task per node of a panta.sbatch job (srun --ntasks-per-node=1): starts this node's vLLM server(s),
# waits until each answers /health, then serves with one `panta worker` per server, pointed at it through
# --base-url. On SIGTERM (from panta.sbatch, scancel or the end of the job) it stops in order: the workers
# first (each finishes the calls it holds and exits 0), then vLLM, which they need until then.
# Nothing here needs editing: the settings come from panta.sbatch's environment.
set -uo pipefail

host="$(hostname -s)"
log() { printf '%s node.sh %s: %s\n' "$(date -Is)" "$host" "$*" >&2; }
PANTA=("${NODE:-node}" "$PANTA_HOME/packages/cli/bin/panta.js")
read -r -a VLLM_CMD <<< "${VLLM:-vllm}"
read -r -a EXTRA <<< "${VLLM_EXTRA_ARGS:-}"

# The GPUs Slurm gave this step (CUDA_VISIBLE_DEVICES), else every GPU nvidia-smi lists.
if [[ -n ${CUDA_VISIBLE_DEVICES:-} ]]; then
  IFS=, read -r -a gpus <<< "$CUDA_VISIBLE_DEVICES"
else
  mapfile -t gpus < <(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null)
fi
if ((${#gpus[@]} == 0)); then
  log "no GPU visible (CUDA_VISIBLE_DEVICES is empty and nvidia-smi lists none)"
  exit 1
fi

# per-gpu: one server per GPU (ports VLLM_PORT, VLLM_PORT+1, ...); per-node: one server, tensor parallel.
servers=() # "devices port tensor_parallel"
if [[ ${VLLM_MODE:-per-gpu} == per-node ]]; then
  servers+=("$(IFS=,; echo "${gpus[*]}") ${VLLM_PORT:-8000} ${#gpus[@]}")
else
  for i in "${!gpus[@]}"; do servers+=("${gpus[$i]} $((${VLLM_PORT:-8000} + i)) 1"); done
fi

vllm_pids=() worker_pids=() stopping=""

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
# and this script, never vLLM directly, so the workers' last calls are still answered.
for server in "${servers[@]}"; do
  read -r devices port tp <<< "$server"
  CUDA_VISIBLE_DEVICES="$devices" setsid "${VLLM_CMD[@]}" serve "$VLLM_MODEL" \
    --host 0.0.0.0 --port "$port" --tensor-parallel-size "$tp" \
    --max-num-seqs "$VLLM_MAX_NUM_SEQS" --max-model-len "$VLLM_MAX_MODEL_LEN" "${EXTRA[@]}" \
    > "$LOG_DIR/vllm-$host-$port.log" 2>&1 &
  vllm_pids+=($!)
  log "vLLM on GPU(s) $devices, port $port (log: $LOG_DIR/vllm-$host-$port.log)"
done

# Wait for every server's /health (the first start may load ~30 GB of weights).
for i in "${!servers[@]}"; do
  read -r _ port _ <<< "${servers[$i]}"
  deadline=$((SECONDS + ${VLLM_START_TIMEOUT:-1800}))
  until curl -fsS -o /dev/null "http://127.0.0.1:$port/health" 2>/dev/null; do
    if ! kill -0 "${vllm_pids[$i]}" 2>/dev/null || ((SECONDS > deadline)); then
      log "vLLM on port $port did not become healthy: see $LOG_DIR/vllm-$host-$port.log"
      stop
      exit 1
    fi
    sleep 5 &
    wait $!
  done
  log "vLLM on port $port is healthy"
done

# One worker per server, in its own session like vLLM: only this script signals it, exactly once. A worker
# that crashes is started again (it resumes: commits are idempotent); one that exits 0 was told to stop.
start_worker() { # index port
  setsid "${PANTA[@]}" worker --concurrency "${WORKER_CONCURRENCY:-64}" --base-url "http://127.0.0.1:$2/v1" \
    >> "$LOG_DIR/worker-$host-$2.log" 2>&1 &
  worker_pids[$1]=$!
}
ports=()
for i in "${!servers[@]}"; do
  read -r _ port _ <<< "${servers[$i]}"
  ports[i]=$port
  start_worker "$i" "$port"
done
log "${#worker_pids[@]} worker(s) serving (Redis from PANTA_REDIS_URL)"

# Serve until told to stop (the trap), or until every worker has exited 0 on its own.
while :; do
  sleep 5 &
  wait $!
  alive=0
  for i in "${!worker_pids[@]}"; do
    pid="${worker_pids[$i]}"
    [[ -z $pid ]] && continue
    if kill -0 "$pid" 2>/dev/null; then alive=$((alive + 1)); continue; fi
    code=0
    wait "$pid" || code=$?
    if ((code == 0)); then
      worker_pids[i]=""
      log "worker for port ${ports[$i]} exited 0"
    else
      log "worker for port ${ports[$i]} exited $code: starting it again"
      start_worker "$i" "${ports[$i]}"
      alive=$((alive + 1))
    fi
  done
  ((alive == 0)) && break
done
stop
exit 0
