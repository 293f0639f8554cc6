from labkit.cuda import cupy
from labkit.workloads.sage2.inputs import random_inputs, check_inputs
from labkit.workloads.sage2.plan import Sage2Plan
from labkit.workloads.sage2.schedule import Schedule
cp = cupy()
q, k, v = random_inputs(1, 8192, 8192, 56, 56, 128, seed=0)
p = Sage2Plan(check_inputs(q, k, v), Schedule.sm90())
p.run()
p.mainloop()
p.mainloop()
cp.cuda.get_current_stream().synchronize()
