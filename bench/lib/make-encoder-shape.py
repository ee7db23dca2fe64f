#!/usr/bin/env python3
"""Writes a BERT-shaped ONNX encoder with random weights: the graph, shapes and FLOPs of a sentence-transformers
export of the named size, not its weights (the time of a forward pass depends on the shapes only). With the tiny
test fixture's tokenizer, for bench/encoder-cores.mjs. Needs numpy and onnx (pip install onnx); nothing is
downloaded.
  python3 bench/lib/make-encoder-shape.py OUT_DIR LAYERS HIDDEN HEADS INTERMEDIATE
  e.g. all-MiniLM-L6-v2: 6 384 12 1536; all-MiniLM-L12-v2: 12 384 12 1536; (paraphrase-)mpnet-base: 12 768 12 3072
"""
import json, shutil, sys
from pathlib import Path
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out, L, H, NH, I = Path(sys.argv[1]), *map(int, sys.argv[2:6])
fixture = Path(__file__).resolve().parents[2] / 'packages/embed/test/fixtures/tiny-encoder'
out.mkdir(parents=True, exist_ok=True)
for f in ('tokenizer.json', 'special_tokens_map.json'):
    shutil.copy(fixture / f, out / f)
cfg = json.loads((fixture / 'tokenizer_config.json').read_text())
cfg['model_max_length'] = 512
(out / 'tokenizer_config.json').write_text(json.dumps(cfg))
vocab = len(json.loads((fixture / 'tokenizer.json').read_text())['model']['vocab'])
rng = np.random.default_rng(1)
inits, nodes = [], []
def w(name, *shape, scale=0.02):
    inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)); return name
def c(name, arr):
    inits.append(numpy_helper.from_array(np.asarray(arr), name)); return name
def n(op, ins, out, **kw):
    nodes.append(helper.make_node(op, ins, [out], **kw)); return out
def ln(x, p):
    return n('LayerNormalization', [x, c(p + '.g', np.ones(H, np.float32)), c(p + '.b', np.zeros(H, np.float32))], p + '.out', axis=-1, epsilon=1e-12)
def lin(x, p, i, o):
    return n('Add', [n('MatMul', [x, w(p + '.w', i, o)], p + '.mm'), w(p + '.bias', o)], p + '.out')
d = H // NH
seq = n('Gather', [n('Shape', ['input_ids'], 'shape'), c('one', np.array(1, np.int64))], 'seq', axis=0)
pos = n('Range', [c('zero', np.array(0, np.int64)), seq, c('step', np.array(1, np.int64))], 'pos')
x = n('Add', [n('Add', [n('Gather', [w('word', vocab, H), 'input_ids'], 'we'), n('Gather', [w('posemb', 512, H), pos], 'pe')], 'e1'),
              n('Gather', [w('type', 2, H), 'token_type_ids'], 'te')], 'e2')
x = ln(x, 'emb.ln')
m = n('Cast', ['attention_mask'], 'maskf', to=TensorProto.FLOAT)
bias = n('Unsqueeze', [n('Mul', [n('Sub', [c('onef', np.array(1, np.float32)), m], 'inv'), c('neg', np.array(-10000, np.float32))], 'mb'),
                       c('ax', np.array([1, 2], np.int64))], 'bias')
split = c('split', np.array([0, 0, NH, d], np.int64))
merge = c('merge', np.array([0, 0, H], np.int64))
for l in range(L):
    p = f'l{l}'
    heads = lambda t, perm: n('Transpose', [n('Reshape', [lin(x, f'{p}.{t}', H, H), split], f'{p}.{t}.r')], f'{p}.{t}.t', perm=perm)
    q, k, v = heads('q', [0, 2, 1, 3]), heads('k', [0, 2, 3, 1]), heads('v', [0, 2, 1, 3])
    s = n('Add', [n('Mul', [n('MatMul', [q, k], f'{p}.qk'), c(f'{p}.scale', np.array(1 / np.sqrt(d), np.float32))], f'{p}.sc'), bias], f'{p}.sb')
    a = n('MatMul', [n('Softmax', [s], f'{p}.sm', axis=-1), v], f'{p}.av')
    a = n('Reshape', [n('Transpose', [a], f'{p}.at', perm=[0, 2, 1, 3]), merge], f'{p}.am')
    x = ln(n('Add', [lin(a, f'{p}.o', H, H), x], f'{p}.res1'), f'{p}.ln1')
    h = lin(x, f'{p}.ff1', H, I)
    g = n('Mul', [n('Mul', [h, c(f'{p}.half', np.array(0.5, np.float32))], f'{p}.h2'),
                  n('Add', [c(f'{p}.onep', np.array(1, np.float32)), n('Erf', [n('Div', [h, c(f'{p}.sq2', np.array(np.sqrt(2), np.float32))], f'{p}.hd')], f'{p}.erf')], f'{p}.e1')], f'{p}.gelu')
    x = ln(n('Add', [lin(g, f'{p}.ff2', I, H), x], f'{p}.res2'), f'{p}.ln2')
nodes.append(helper.make_node('Identity', [x], ['last_hidden_state']))
io = lambda name, t, shape: helper.make_tensor_value_info(name, t, shape)
graph = helper.make_graph(nodes, 'bert', [io(i, TensorProto.INT64, ['batch_size', 'sequence_length']) for i in ('input_ids', 'attention_mask', 'token_type_ids')],
                          [io('last_hidden_state', TensorProto.FLOAT, ['batch_size', 'sequence_length', H])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17)])
model.ir_version = 8
onnx.save(model, out / 'model.onnx')
print(f'{out}: {L} layers, hidden {H}, {NH} heads, intermediate {I}, {sum(np.prod(t.dims) for t in inits) / 1e6:.1f} M parameters')
