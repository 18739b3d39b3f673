# The JAX (XLA) profile fixture (fixtures/traces/README.md, xla/): run on the lent GPU
# machine, as this command (these comment lines apart) ran there: `bash record_xla.sh` with
# $OUT set. Writes into $OUT: env.txt, trace.log (what JAX reported), the profile plugin's
# HOST.trace.json.gz and HOST.xplane.pb, xla_steps.ncu.csv.gz (the same steps under
# Nsight Compute, loading the executables from the persistent compilation cache).
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1;cd /tmp;cat>r.py<<'E'
import jax,jax.numpy as jnp,sys,json
c=jax.config.update;c("jax_compilation_cache_dir","/tmp/xc");c("jax_persistent_cache_min_compile_time_secs",0);c("jax_persistent_cache_min_entry_size_bytes",-1)
def f(x,w,k):
 b,ch=x.shape[0],k.shape[3];s=round((x.shape[1]//ch)**.5)
 i=jnp.dot(x,w).reshape(b,s,s,ch)
 y=jax.lax.conv_general_dilated(i,k,(1,1),"SAME",dimension_numbers=("NHWC","HWIO","NHWC"))
 return jax.nn.softmax(y.reshape(b,-1),axis=-1).sum(0)
g=jax.jit(f);K=jax.random.split(jax.random.PRNGKey(0),6);R=[]
for n,(b,s,ch) in enumerate(((4,16,4),(256,32,4))):
 d=s*s*ch;a=(jax.random.normal(K[3*n],(b,d)),jax.random.normal(K[3*n+1],(d,d))/d**.5,jax.random.normal(K[3*n+2],(3,3,ch,ch)));g(*a).block_until_ready();R.append(a)
def run():
 for _ in range(3):
  for a in R:g(*a).block_until_ready()
if sys.argv[1]=="t":
 v=jax.devices()[0];print(json.dumps(dict(jax=jax.__version__,kind=v.device_kind,cores=getattr(v,"core_count",0),cc=getattr(v,"compute_capability",0))))
 with jax.profiler.trace("/tmp/p"):run()
else:
 import cupy as cp;cp.cuda.runtime.deviceSynchronize();cp.cuda.profiler.start();run();cp.cuda.profiler.stop()
E
nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.max.sm --format=csv>$OUT/env.txt
python3 -c "import torch;print(torch.cuda.get_device_properties(0))">>$OUT/env.txt
python3 r.py t>$OUT/trace.log 2>&1;echo t=$?
for f in $(find /tmp/p -type f);do ls -la $f;cp $f $OUT/${f##*/};done
N=$(command -v ncu||ls /opt/nvidia/nsight-compute/*/ncu|head -1);$N --version>>$OUT/env.txt
timeout 240 $N --profile-from-start off --section LaunchStats --section Occupancy --csv --page details --print-units base python3 r.py n>n.csv 2>$OUT/ncu.log;echo n=$? $(grep -c '^"' n.csv);gzip -9c n.csv>$OUT/xla_steps.ncu.csv.gz;cat $OUT/env.txt $OUT/trace.log;tail -3 $OUT/ncu.log
