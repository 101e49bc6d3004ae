from flagtree_spec import spec_path

spec_path(__path__)
