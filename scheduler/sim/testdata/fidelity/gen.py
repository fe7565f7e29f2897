# Regenerates philly300.csv and wide200.csv (Tiresias trace format) from the
# repository root: /usr/bin/python3 scheduler/sim/testdata/fidelity/gen.py
# Seeded, so the files are reproducible; see scheduler/sim/README.md.
import csv, random, math, datetime
models=['vgg19','vgg16','vgg11','resnet50','resnet101','inception3','alexnet','googlenet']
def write(path, jobs):
    jobs.sort(key=lambda j:j[1])
    with open(path,'w') as f:
        f.write('job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n')
        for i,(g,s,d) in enumerate(jobs):
            nxt = jobs[i+1][1]-s if i+1<len(jobs) else 0
            f.write('%d,%d,%d,%d,%s,%d,%d\n'%(i,g,s,1000,models[i%len(models)],d,nxt))
def load(jobs, gpus):
    span=max(s+d for g,s,d in jobs)-min(s for g,s,d in jobs)
    return sum(g*d for g,s,d in jobs)/span/gpus
# 300 Philly jobs of 1-8 GPUs (150/60/60/30 by size, seeded), Poisson arrivals at load ~0.8 on 32 GPUs
allr=list(csv.DictReader(open('../shared/traces/philly/philly_jobs.csv')))
rs=random.Random(3)
base=[]
for g,n in ((1,150),(2,60),(4,60),(8,30)):
    pool=[r for r in allr if r['num_gpus']==str(g) and float(r['duration'])>0]
    base+= [(g, max(1,int(float(r['duration'])))) for r in rs.sample(pool,n)]
rs.shuffle(base)
gap=sum(g*d for g,d in base)/len(base)/32/0.8
jobs=[];t=0
for g,d in base:
    jobs.append((g,int(t),d)); t+=rs.expovariate(1/gap)
print('philly300 load',round(load(jobs,32),2))
write('scheduler/sim/testdata/fidelity/philly300.csv', jobs)
# many mid-length wide jobs: 200 jobs, 4 or 8 GPUs (some 1-2), 30 min - 3 h, Poisson, load ~1.0 on 32 GPUs
rng=random.Random(7)
jobs=[]; t=0
for i in range(200):
    g=rng.choice([4,4,8,8,8,2,1])
    d=int(math.exp(rng.uniform(math.log(1800),math.log(10800))))
    jobs.append([g,0,d])
mean_work=sum(g*d for g,_,d in jobs)/len(jobs)
gap=mean_work/32/1.0
for j in jobs:
    j[1]=int(t); t+=rng.expovariate(1/gap)
jobs=[tuple(j) for j in jobs]
print('wide200 load',round(load(jobs,32),2))
write('scheduler/sim/testdata/fidelity/wide200.csv', jobs)
# More wide workloads for the fidelity table (scheduler/sim/README.md):
# (name, seed, jobs, load on 32 GPUs, GPU choices), durations 30 min - 3 h
# log-uniform, Poisson arrivals.
def wide(name, seed, n, target, widths):
    rng=random.Random(seed)
    jobs=[[rng.choice(widths),0,int(math.exp(rng.uniform(math.log(1800),math.log(10800))))] for _ in range(n)]
    gap=sum(g*d for g,_,d in jobs)/len(jobs)/32/target
    t=0
    for j in jobs:
        j[1]=int(t); t+=rng.expovariate(1/gap)
    jobs=[tuple(j) for j in jobs]
    print(name,'load',round(load(jobs,32),2))
    write('scheduler/sim/testdata/fidelity/%s.csv'%name, jobs)
wide('wide8x300', 11, 300, 0.9, [8,8,8,8,4,4,2,1])
wide('wide200l05', 13, 200, 0.5, [4,4,8,8,8,2,1])
wide('wide200l08', 17, 200, 0.8, [4,4,8,8,8,2,1])
wide('wide250l11', 19, 250, 1.1, [8,8,4,4,4,2,2,1])
