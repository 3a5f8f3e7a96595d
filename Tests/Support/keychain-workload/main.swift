print("workload")
