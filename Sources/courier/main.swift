print("courier")
